// Quantised dot-product kernels and their runtime dispatch table.
//
// Matmul convention (ggml's): a weight matrix W has `rows` output rows of
// `cols` input elements, stored row-major, each row in ggml's block layout of
// its GgmlType (cols is ne0 in GGUF, rows is ne1). y = W x means
// y[r] = sum_c W[r, c] * x[c].
//
// Activations are quantised once per matvec into the weight type's
// `vec_dot_type` (Q8_K for the K-quants, IQ4_XS and TQ1_0/TQ2_0, Q8_0 for Q4_0/Q5_0/Q8_0/
// IQ4_NL/MXFP4, Q8_1 for Q4_1/Q5_1, F16 for F16, BF16 for BF16, F32 for F32), exactly as ggml's CPU
// backend does, so results match ggml up to summation order.
//
// Tiers: scalar (reference, the test oracle), avx2, avx512 (with VNNI where
// the CPU has it), neon. `kernel_table(tier)` returns null when the tier is
// not compiled in or the CPU/OS cannot run it (CPUID + XGETBV on x86).
//
// Thread-safety: all functions are pure; tables are immutable after first use.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/block_formats.h"
#include "kernels/ggml_type.h"

namespace les::kernels {

// s[0] = dot(one weight row `w` of type T, activations `x` already quantised to
// vec_dot_type(T)), over n elements (n a multiple of both block sizes).
// `w` and `x` need their block structs' natural alignment (alignof <= 4 bytes;
// GGUF tensor data is 32-byte aligned), not SIMD-width alignment.
using VecDotFn = void (*)(int64_t n, float* s, const void* w, const void* x);

// The same dot product of one weight row `w` with nx activation rows, row t at
// x + t * x_stride bytes, written to s[t * s_stride] (t < nx, 1 <= nx <=
// kVecDotMultiMax). The weight row is unpacked once and met by every
// activation row, so prefill/batched matmul reads and decodes each weight block
// once per nx tokens. Each s[t * s_stride] is bit-identical to what the same
// tier's vec_dot gives for row t alone (same integer sums, same float order):
// batch size never changes a result. Alignment as for VecDotFn.
using VecDotMultiFn = void (*)(int64_t n, float* s, int64_t s_stride, const void* w, const void* x,
                               size_t x_stride, int nx);
inline constexpr int kVecDotMultiMax = 4;

// Quantise n floats (n a multiple of the block size) into blocks at y.
using QuantizeRowFn = void (*)(const float* x, void* y, int64_t n);

// Dequantise n elements (n a multiple of the block size) of blocks at x into y.
using DequantizeRowFn = void (*)(const void* x, float* y, int64_t n);

enum class KernelTier : int { scalar = 0, avx2 = 1, avx512 = 2, neon = 3 };
inline constexpr int kKernelTierCount = 4;

const char* kernel_tier_name(KernelTier tier) noexcept;  // "scalar", "avx2", ...

struct TypeKernels {
  VecDotFn vec_dot = nullptr;           // null: this weight type has no dot product
  // Optional; when set, bit-identical to vec_dot per activation row (see
  // VecDotMultiFn). A tier that replaces vec_dot must replace or clear it.
  VecDotMultiFn vec_dot_multi = nullptr;
  GgmlType vec_dot_type = GgmlType::F32;
  DequantizeRowFn dequantize_row = nullptr;  // null: type cannot be dequantised
  QuantizeRowFn quantize_row = nullptr;      // set for activation types (Q8_0, Q8_1, Q8_K, F16, BF16, F32)
};

// Vectorised pieces of the F32 ops (kernels/ops.h) that follow ggml's x86
// AVX-512 arithmetic bit for bit. Every tier's functions give results
// bit-identical to the scalar tier's (the reference), which the tests check.
struct OpKernels {
  // y[i] = ops::expf_ggml(x[i]) for i < 16. x and y may alias.
  void (*exp16)(const float* x, float* y) = nullptr;
  // F16 attention scores (ops::attention_head_f16): for j < n_kv,
  //   scores[j] = dot(q, K_j) over head_dim elements, K_j = head_dim halves at
  //   k + j * k_stride bytes (any byte address), q = head_dim floats that are
  //   exact halves. Summation: element i adds its exact product into lane
  //   i % 16 of accumulator (vec_dot ? (i / 16) % 4 : 0); with vec_dot the
  //   accumulators are folded (0+2) + (1+3); the 16 lanes end in
  //   ops::reduce_add16. (vec_dot = ggml_vec_dot_f16, else llamafile's tinyBLAS.)
  void (*attn_f16_kq)(const float* q, const uint8_t* k, int64_t k_stride, int64_t n_kv, int head_dim,
                      bool vec_dot, float* scores) = nullptr;
  // F16 attention output: for d < head_dim_v, out[d] = dot over j < n_kv of
  // p[j] (exact halves) and V_j[d] (V_j = head_dim_v halves at v + j * v_stride
  // bytes), element j summed like element i of attn_f16_kq. scratch: at least
  // op_kernels_kqv_scratch(head_dim_v) floats, any content.
  void (*attn_f16_kqv)(const float* p, const uint8_t* v, int64_t v_stride, int64_t n_kv, int head_dim_v,
                       bool vec_dot, float* out, float* scratch) = nullptr;
  // Optional (null: ops::attention_queries_f16 calls attn_f16_kq once per
  // query). Gemm-order scores (vec_dot = false) of nq <= kAttnMultiMax query
  // vectors against the same K rows: for i < nq and j < n_kv,
  //   scores[i * s_stride + j] = attn_f16_kq(q + i * q_stride, k, k_stride, n_kv,
  //                                          head_dim, false)[j]
  // bit for bit (each K row is converted once and met by every query).
  // scratch: op_kernels_kq_multi_scratch(head_dim) floats, any content.
  void (*attn_f16_kq_multi)(const float* q, int64_t q_stride, int nq, const uint8_t* k, int64_t k_stride,
                            int64_t n_kv, int head_dim, float* scores, int64_t s_stride, float* scratch) = nullptr;
  // Optional (null: one attn_f16_kqv per query). Gemm-order outputs of nq <=
  // kAttnMultiMax queries over the same V rows, query i over its own n_kv[i]
  // positions: out + i * out_stride = attn_f16_kqv(p + i * p_stride, v,
  // v_stride, n_kv[i], head_dim_v, false) bit for bit (head_dim_v floats each).
  // scratch: op_kernels_kqv_multi_scratch(nq, head_dim_v) floats, any content.
  void (*attn_f16_kqv_multi)(const float* p, int64_t p_stride, const int64_t* n_kv, int nq, const uint8_t* v,
                             int64_t v_stride, int head_dim_v, float* out, int64_t out_stride,
                             float* scratch) = nullptr;
  // In place, for i < n: x[i] = fp16_to_fp32(fp32_to_fp16(x[i])) (fp16.h:
  // round to nearest even, overflow to inf, subnormals kept, NaN quiet; the
  // results of VCVTPS2PH with rounding mode 0 and back). ggml rounds the
  // attention query and probabilities to F16 this way (ops::attention_head_f16).
  void (*round_f16)(float* x, int64_t n) = nullptr;

  // --- Gated DeltaNet (linear attention) pieces: ggml's CPU ops ssm_conv,
  // l2_norm, rms_norm + mul + silu and gated_delta_net, in the float order of
  // its x86 AVX-512 build (ggml_vec_dot_f32, ggml_vec_mad_f32, GCC-contracted
  // scalar loops). Shapes: rows are token-major; nothing here allocates.

  // Causal depthwise convolution (ggml_ssm_conv): for t < n and c < channels,
  //   out[t * channels + c] = fma chain over j = 0 .. d_conv - 1 of
  //                           x[(t + j) * channels + c] * w[c * d_conv + j]
  // (acc = 0; acc = fma(x, w, acc)). x holds d_conv - 1 + n rows of `channels`
  // floats: the conv state (the previous d_conv - 1 raw rows, oldest first),
  // then the n new rows. w: the GGUF tensor ssm_conv1d {d_conv, channels}
  // (taps contiguous per channel). out must not overlap x.
  void (*ssm_conv)(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out) = nullptr;
  // y[i] = x[i] * (1 / max(sqrt(float(sum)), eps)), sum = the squares x[i] * x[i]
  // (F32 products) added in index order in double (ggml_l2_norm). y may alias x.
  void (*l2_norm)(const float* x, int64_t n, float eps, float* y) = nullptr;
  // Gated RMS norm (qwen35's norm_gated): out[i] = ((x[i] * scale) * w[i]) * silu(z[i]),
  // scale = 1 / sqrt(float(sum / n) + eps), sum as l2_norm; silu(z) as
  // ggml_vec_silu_f32 on AVX-512: z / (1 + expf_ggml(0 - z)) for each full chunk
  // of 16, z / (1 + exp(-z)) (ops::silu) for the tail. out may alias x or z.
  void (*rms_norm_gated)(const float* x, const float* w, const float* z, int64_t n, float eps, float* out) = nullptr;
  // One value head of the gated delta rule over a.n_tokens tokens (DeltaRuleArgs).
  void (*delta_rule)(const struct DeltaRuleArgs& a) = nullptr;

  // --- Vision encoder (SigLIP-style ViT, vision/vision_encoder.h) element-wise
  // ops: ggml's norm / gelu / gelu_erf. SIMD tiers may differ from the scalar
  // reference by a few ulp (different tanh / erf evaluations), not bit for bit.

  // LayerNorm of one row (ggml_norm, then ggml_mul by w and ggml_add of b):
  //   mean = (sum of x[i] in double) / n; c[i] = x[i] - float(mean);
  //   var = (sum of c[i] * c[i] in double) / n; s = 1 / sqrt(float(var) + eps);
  //   y[i] = (c[i] * s) * w[i] + b[i] (w or b null: 1 / 0). y may alias x. n >= 1.
  void (*layer_norm)(const float* x, const float* w, const float* b, int64_t n, float eps, float* y) = nullptr;
  // y[i] = 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))), i < n (tanh-approximate
  // GELU, ggml_gelu / PyTorch gelu_pytorch_tanh). y may alias x.
  void (*gelu_tanh)(const float* x, int64_t n, float* y) = nullptr;
  // y[i] = 0.5 x (1 + erf(x / sqrt(2))), i < n (exact GELU, ggml_gelu_erf /
  // PyTorch nn.GELU()). y may alias x.
  void (*gelu_erf)(const float* x, int64_t n, float* y) = nullptr;
};

// Arguments of OpKernels::delta_rule: one value head of ggml_gated_delta_net
// (one state snapshot), S = head_dim. The state is S x S floats stored
// transposed, s[j * S + i] = S[i][j] (i over the key dimension, j over the
// value dimension), so row j is contiguous. For each token t < n_tokens, with
// q, k, v its head vectors (S floats each), decay = decay[t * gate_stride] (the
// e^g of the token) and beta = beta[t * gate_stride]:
//   s = s * decay                                  (token 0 reads state_in)
//   delta[j] = (v[j] - dot(s_j, k)) * beta         (s_j = row j)
//   s_j[i] = fma(k[i], delta[j], s_j[i])
//   out[t * out_stride + j] = dot(s_j, q) * scale  (skipped when out is null)
// dot(a, b) over S elements is ggml_vec_dot_f32 of the AVX-512 build: element
// i < S & ~63 is added by a fused multiply-add into lane i % 16 of accumulator
// (i / 16) % 4, the accumulators fold (0 + 2) + (1 + 3), the 16 lanes reduce
// as ops::reduce_add16, and elements from S & ~63 on continue as a fused
// multiply-add chain on that sum. Rows only ever meet their own delta, so a
// kernel may run the steps row by row. state_in may equal state_out (in place);
// otherwise state_in is only read. With n_tokens == 0 the state is copied.
struct DeltaRuleArgs {
  int64_t n_tokens = 0;
  int head_dim = 0;                  // S >= 1
  const float* state_in = nullptr;   // S * S floats
  float* state_out = nullptr;        // S * S floats
  const float* q = nullptr;          // token t at q + t * qk_stride (unused when out is null)
  const float* k = nullptr;          // token t at k + t * qk_stride
  int64_t qk_stride = 0;
  const float* v = nullptr;          // token t at v + t * v_stride
  int64_t v_stride = 0;
  const float* decay = nullptr;      // e^g, in (0, 1]
  const float* beta = nullptr;
  int64_t gate_stride = 0;
  float scale = 1.0f;                // 1 / sqrt(S) for qwen35
  float* out = nullptr;              // token t at out + t * out_stride; null: state only
  int64_t out_stride = 0;
  float* scratch = nullptr;          // S floats, any content
};

// The hot loops of the weight quantisers' scale search (quant_fit.h): each
// evaluates a group of n elements (n a multiple of 8, at most 256) under
// n_cand candidate inverse scales s[c] and returns per-candidate sums from
// which the search solves the least-squares scale. w is null (every weight 1)
// or n weights; x, w and s must be finite.
// Codes are exact small integers q. Sums are in double, bit for bit on every
// tier: element i's term is formed in double from the F32 inputs as
// (w_i * x_i) * q or (w_i * q) * q (w_i * x_i and w_i * q are exact in
// double, so only a product with x rounds, once) and added to lane i % 8 of
// eight double accumulators in increasing i; the lanes are then combined as
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). No FMA anywhere.
struct FitKernels {
  // Symmetric, contiguous levels: q_i = clamp(nearbyint(x_i * s[c]), lo, hi)
  // (the F32 product rounded to nearest even); sxl[c] = sum (w_i x_i) q_i,
  // sll[c] = sum (w_i q_i) q_i.
  void (*eval_symmetric)(const float* x, const float* w, int n, int lo, int hi, const float* s, int n_cand,
                         double* sxl, double* sll) = nullptr;
  // Symmetric, a table of 16 ascending levels (IQ4_NL): q_i = levels[k] with
  // k = the number of midpoints (levels[j] + levels[j+1]) / 2 (exact halves)
  // strictly below the F32 product x_i * s[c]; same sums.
  void (*eval_symmetric_table16)(const float* x, const float* w, int n, const int8_t* levels, const float* s,
                                 int n_cand, double* sxl, double* sll) = nullptr;
  // Affine: q_i = clamp(nearbyint((x_i - x0) * s[c]), 0, qmax) (F32 subtract,
  // then F32 multiply); sq[c] = sum w_i q_i, sqq[c] = sum (w_i q_i) q_i,
  // sxq[c] = sum (w_i x_i) q_i.
  void (*eval_affine)(const float* x, const float* w, int n, float x0, int qmax, const float* s, int n_cand,
                      double* sq, double* sqq, double* sxq) = nullptr;
};

// One block of the packed GEMM (gemm.h) for a tier to compute: for every
// row i < rows and token t < n, y[t * y_stride + i] = the fused multiply-add
// chain over k = 0 .. cols-1 of float(W[i][k]) and x[t * x_stride + k] that
// gemm.h defines (the same bits on every tier). W row i is at w + i * w_stride
// bytes, F16 halves or F32 floats (wtype); rows may start at any 2-byte (F16)
// or 4-byte (F32) address. pack: kGemmPackFloats floats of any content, the
// tier's packed weight panel. y must not overlap w, x or pack.
struct GemmBlock {
  GgmlType wtype = GgmlType::F16;
  const uint8_t* w = nullptr;
  size_t w_stride = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  const float* x = nullptr;
  int64_t x_stride = 0;
  int64_t n = 0;
  float* y = nullptr;
  int64_t y_stride = 0;
  float* pack = nullptr;
};
inline constexpr int64_t kGemmPackFloats = 512 * 32;  // a panel of up to 32 rows x 512 columns

struct GemmKernels {
  void (*block)(const GemmBlock& b) = nullptr;  // every output of the block (see GemmBlock)
};

// Scratch floats OpKernels::attn_f16_kqv needs (64 lanes x head_dim_v rounded up to 16).
inline int64_t op_kernels_kqv_scratch(int head_dim_v) { return 64 * ((static_cast<int64_t>(head_dim_v) + 15) / 16 * 16); }

// Most queries one OpKernels::attn_f16_kq_multi / attn_f16_kqv_multi call takes.
inline constexpr int kAttnMultiMax = 8;
// Scratch floats attn_f16_kq_multi needs: 16 K rows of head_dim rounded up to 16.
inline int64_t op_kernels_kq_multi_scratch(int head_dim) { return 16 * ((static_cast<int64_t>(head_dim) + 15) / 16 * 16); }
// Scratch floats attn_f16_kqv_multi needs: 16 lane rows per query (at least
// attn_f16_kqv's 64) of head_dim_v rounded up to 16.
inline int64_t op_kernels_kqv_multi_scratch(int nq, int head_dim_v) {
  return (nq * 16 > 64 ? nq * 16 : 64) * ((static_cast<int64_t>(head_dim_v) + 15) / 16 * 16);
}

struct KernelTable {
  KernelTier tier = KernelTier::scalar;
  TypeKernels types[kGgmlTypeCount];
  OpKernels ops;
  FitKernels fit;
  GemmKernels gemm;

  const TypeKernels& of(GgmlType t) const { return types[static_cast<uint32_t>(t)]; }
};

// The table of a tier, or null if that tier is not compiled into this binary or
// this CPU/OS cannot run it. Scalar is always available.
const KernelTable* kernel_table(KernelTier tier) noexcept;

// The best tier this machine runs. The environment variable LES_KERNEL_TIER
// (scalar|avx2|avx512|neon) forces a lower tier for testing; an unsupported
// request falls back to the best supported one below it.
KernelTier best_kernel_tier() noexcept;

// Convenience: kernel_table(best_kernel_tier()).
const KernelTable& default_kernel_table() noexcept;

// True if weight type t can be used in matvec/matmul by every tier.
bool weight_type_supported(GgmlType t) noexcept;

}  // namespace les::kernels
