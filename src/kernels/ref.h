// Scalar reference kernels: dequantisation, activation quantisation and dot
// products of ggml's block formats. Plain, obviously correct C++, never
// optimised: these are the test oracle of every SIMD tier and the scalar tier
// of the kernel table (scalar.cpp).
//
// Conventions shared by every function here:
// * n is the number of elements of one row and must be a multiple of the
//   format's block size (32, or 256 = kQKK for the K-quants; 1 for F32/F16/BF16).
//   Only whole blocks are processed; callers validate n (ggml_row_bytes).
//   Nothing here allocates, throws or aborts.
// * Rows are ggml rows: n / block_size blocks back to back, no padding. Block,
//   F16 and BF16 rows may start at any byte address (their fields are read and
//   written through memcpy, kernels/unaligned.h), so a typed pointer here is a
//   statement of format, not of alignment; float arrays need float alignment
//   except the F32 rows of the F32 kernels, which may be misaligned too.
// * Float results assume the default rounding mode (round to nearest even), and
//   the code is written so that no expression can be contracted into an FMA.
// * Thread-safety: pure functions of their arguments.
//
// Sources: block layouts of ggml's ggml-common.h, value formulas of
// ggml-quants.c's dequantize_row_* and the CPU backend's from_float (read, not
// copied); bit layouts are spelled out in block_elements.h.
#pragma once

#include <cstdint>

#include "kernels/block_formats.h"
#include "kernels/fp16.h"
#include "kernels/kernels.h"

namespace les::kernels {

// ---------------------------------------------------------------------------
// Dequantisation: y[0..n) = the values the n elements of row x stand for.
// Bit-exact with ggml's to_float (checked against ggml's output: tests/kernels/test_dequantize.cpp):
//   Q4_0 q*d; Q4_1 q*d + m; Q5_0 q*d; Q5_1 q*d + m; Q8_0 q*d; IQ4_NL d*v[q];
//   Q2_K (d*sc)*q - (dmin*m); Q3_K (d*sc)*q; Q4_K/Q5_K (d*sc)*q - (dmin*m);
//   Q6_K (d*sc)*q; Q8_K d*q (scales widened from F16 to F32 first);
//   IQ4_XS (d*(ls-32))*v[q]; MXFP4 v[q]*e8m0_half(e) (ref_codebook4.cpp);
//   TQ1_0/TQ2_0 t*d, t the ternary code (ref_ternary.cpp).
// ---------------------------------------------------------------------------
void dequantize_row_f32_ref(const float* x, float* y, int64_t n);
void dequantize_row_f16_ref(const fp16_t* x, float* y, int64_t n);
void dequantize_row_bf16_ref(const bf16_t* x, float* y, int64_t n);
void dequantize_row_q4_0_ref(const block_q4_0* x, float* y, int64_t n);
void dequantize_row_q4_1_ref(const block_q4_1* x, float* y, int64_t n);
void dequantize_row_q5_0_ref(const block_q5_0* x, float* y, int64_t n);
void dequantize_row_q5_1_ref(const block_q5_1* x, float* y, int64_t n);
void dequantize_row_q8_0_ref(const block_q8_0* x, float* y, int64_t n);
void dequantize_row_q8_1_ref(const block_q8_1* x, float* y, int64_t n);
void dequantize_row_iq4_nl_ref(const block_iq4_nl* x, float* y, int64_t n);
void dequantize_row_q2_K_ref(const block_q2_K* x, float* y, int64_t n);
void dequantize_row_q3_K_ref(const block_q3_K* x, float* y, int64_t n);
void dequantize_row_q4_K_ref(const block_q4_K* x, float* y, int64_t n);
void dequantize_row_q5_K_ref(const block_q5_K* x, float* y, int64_t n);
void dequantize_row_q6_K_ref(const block_q6_K* x, float* y, int64_t n);
void dequantize_row_q8_K_ref(const block_q8_K* x, float* y, int64_t n);
void dequantize_row_iq4_xs_ref(const block_iq4_xs* x, float* y, int64_t n);
void dequantize_row_mxfp4_ref(const block_mxfp4* x, float* y, int64_t n);
void dequantize_row_tq1_0_ref(const block_tq1_0* x, float* y, int64_t n);
void dequantize_row_tq2_0_ref(const block_tq2_0* x, float* y, int64_t n);

// ---------------------------------------------------------------------------
// Activation quantisation (the vec_dot_type of a weight type), bit-exact with
// ggml's CPU from_float on x86 (checked against matvec_*.x_vecdot.qbytes and
// q8_K.qbytes):
// * Q8_0, per block of 32: amax = max|x|; d = amax / 127; id = 127 / amax
//   (0 if amax == 0); q = round-half-even(x * id); d stored as F16.
// * Q8_1: as Q8_0, plus s = F16(d * sum(q)) with d the unrounded F32 scale.
// * Q8_K, per block of 256: m = the element of largest magnitude (first one on
//   ties), with its sign; if m == 0 all zero; else iscale = -127 / m,
//   q = min(127, round-half-even(iscale * x)), d = 1 / iscale (F32), and
//   bsums[i] = sum of q[16 i .. 16 i + 15].
// * F16 / BF16: round to nearest even (fp16.h); F32: copy.
// ---------------------------------------------------------------------------
void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n);
void quantize_row_q8_1_ref(const float* x, block_q8_1* y, int64_t n);
void quantize_row_q8_K_ref(const float* x, block_q8_K* y, int64_t n);
void quantize_row_f16_ref(const float* x, fp16_t* y, int64_t n);
void quantize_row_bf16_ref(const float* x, bf16_t* y, int64_t n);
void quantize_row_f32_ref(const float* x, float* y, int64_t n);

// ---------------------------------------------------------------------------
// Dot products: *s = dot(weight row w, activation row x) over n elements, with
// x already in the weight type's vec_dot_type (kernels.h). Signature VecDotFn.
//
// Integer part: per block (or K-quant sub-block) the products of the integer
// codes (block_elements.h) with the int8 activations are summed exactly in
// int32; for the K-quants the sub-block sums are multiplied by their integer
// scales and summed in int32 too ("isum"), and the min terms use Q8_K's bsums
// ("msum" = sum over sub-blocks of min * bsum). SIMD kernels must reproduce
// isum/msum bit-exactly.
//
// Float part, per block b in increasing order, into one float accumulator
// acc = 0 (every product below is its own rounded F32 operation):
//   Q4_0/Q5_0/Q8_0/IQ4_NL x Q8_0:  acc += float(isum) * (dw * dx)
//   MXFP4 x Q8_0:                  acc += float(isum) * (dw * dx), dw = e8m0_half(e)
//   Q4_1/Q5_1 x Q8_1:              acc += float(isum) * (dw * dx);  acc += mw * sx
//   Q3_K/Q6_K/IQ4_XS x Q8_K:       acc += float(isum) * (dx * dw)
//   TQ1_0/TQ2_0 x Q8_K:            acc += float(isum) * (dx * dw), isum = sum code * q8
//   Q2_K/Q4_K/Q5_K x Q8_K:         acc += float(isum) * (dx * dw);  acc -= float(msum) * (dx * dminw)
// where dw, mw, dminw are the weight block's F16 fields widened to F32 and dx,
// sx the activation block's scale and scaled sum.
// F32 / F16 / BF16: products of the widened values (exact in F64) summed in
// double in index order, rounded to F32 once at the end.
// ---------------------------------------------------------------------------
void vec_dot_f32_ref(int64_t n, float* s, const void* w, const void* x);   // F32 x F32
void vec_dot_f16_ref(int64_t n, float* s, const void* w, const void* x);   // F16 x F16
void vec_dot_bf16_ref(int64_t n, float* s, const void* w, const void* x);  // BF16 x BF16
void vec_dot_q4_0_q8_0_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_1_q8_1_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_0_q8_0_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_1_q8_1_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q8_0_q8_0_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq4_nl_q8_0_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q2_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q3_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q6_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq4_xs_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_mxfp4_q8_0_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_tq1_0_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_tq2_0_q8_K_ref(int64_t n, float* s, const void* w, const void* x);

// Integer sums of one K-quant block against one Q8_K block, as defined above:
// isum = sum_j scale_j * sum_{e in sub-block j} code(e) * q8[e], and for the
// formats with mins msum = sum_j min_j * (sum of the Q8_K bsums covering j).
// Exposed so SIMD tests can check their integer part bit-exactly.
struct KQuantBlockSums {
  int32_t isum = 0;
  int32_t msum = 0;  // 0 for Q3_K / Q6_K
};
KQuantBlockSums block_sums_q2_K_q8_K_ref(const block_q2_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q3_K_q8_K_ref(const block_q3_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q4_K_q8_K_ref(const block_q4_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q5_K_q8_K_ref(const block_q5_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q6_K_q8_K_ref(const block_q6_K& w, const block_q8_K& x);
// IQ4_XS: isum = sum_j (ls_j - 32) * sum_{e in sub-block j} v[q_e] * q8[e]
// (|isum| < 2^28), msum = 0.
KQuantBlockSums block_sums_iq4_xs_q8_K_ref(const block_iq4_xs& w, const block_q8_K& x);

// ---------------------------------------------------------------------------
// Weight quantisation (for `les quantize` and generated test models): row x of
// n floats into blocks at y, with the scale search on the scalar FitKernels
// (weight_quantizers.h runs the same code on a SIMD tier's kernels, same
// bytes). `importance` is null or n non-negative weights aligned with x (an
// imatrix row: the mean squared activation of each input column); each block
// then minimises sum_i w_i * (x_i - xhat_i)^2 with w_i = importance_i + 0.5 *
// (the row's mean importance), else the plain squared error. Method
// (quant_fit.h): per block / sub-block a coarse-then-fine grid search over
// scales with least-squares refinement; the K-quants fit their integer
// sub-block scales and mins the same way, weighted by how much each one moves
// the block's error, move each integer scale (and min) by +-1 where that
// lowers its sub-block's error, and recompute every code for the scales as
// stored. Not bit-compatible with ggml's quantisers (no need: any decoder
// reads the blocks); quality is checked against ggml's errors on the fixtures
// (tests/kernels/test_quantize_weights.cpp).
// Q8_0 weights use quantize_row_q8_0_weights_ref (a distinct name, not an
// overload, so &quantize_row_q8_0_ref stays unambiguous): the activation
// quantiser above is ggml's plain amax scaling, this one the fitted scale.
// ---------------------------------------------------------------------------
void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n, const float* importance);
void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n, const float* importance);
void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n, const float* importance);
void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n, const float* importance);
void quantize_row_q8_0_weights_ref(const float* x, block_q8_0* y, int64_t n, const float* importance);
void quantize_row_iq4_nl_ref(const float* x, block_iq4_nl* y, int64_t n, const float* importance);
void quantize_row_q2_K_ref(const float* x, block_q2_K* y, int64_t n, const float* importance);
void quantize_row_q3_K_ref(const float* x, block_q3_K* y, int64_t n, const float* importance);
void quantize_row_q4_K_ref(const float* x, block_q4_K* y, int64_t n, const float* importance);
void quantize_row_q5_K_ref(const float* x, block_q5_K* y, int64_t n, const float* importance);
void quantize_row_q6_K_ref(const float* x, block_q6_K* y, int64_t n, const float* importance);
// IQ4_XS: the two-level fit of Q3_K with sub-blocks of 32 and IQ4_NL's levels.
// MXFP4: per block the E8M0 exponent (of the 3 around the one that puts the
// largest |x| at the top levels) with the least weighted error of the nearest
// codes (ref_quantize_mxfp4.cpp).
void quantize_row_iq4_xs_ref(const float* x, block_iq4_xs* y, int64_t n, const float* importance);
void quantize_row_mxfp4_ref(const float* x, block_mxfp4* y, int64_t n, const float* importance);

// FitKernels references (kernels.h states the contract), and the scalar
// FitKernels table they form.
void fit_eval_symmetric_ref(const float* x, const float* w, int n, int lo, int hi, const float* s, int n_cand,
                            double* sxl, double* sll);
void fit_eval_symmetric_table16_ref(const float* x, const float* w, int n, const int8_t* levels, const float* s,
                                    int n_cand, double* sxl, double* sll);
void fit_eval_affine_ref(const float* x, const float* w, int n, float x0, int qmax, const float* s, int n_cand,
                         double* sq, double* sqq, double* sxq);
const FitKernels& reference_fit_kernels() noexcept;

// OpKernels references (kernels.h states each contract): expf_ggml on 16
// floats, and the F16 attention score and output sums in ggml's lane order.
void exp16_ref(const float* x, float* y);
void attn_f16_kq_ref(const float* q, const uint8_t* k, int64_t k_stride, int64_t n_kv, int head_dim, bool vec_dot,
                     float* scores);
void attn_f16_kqv_ref(const float* p, const uint8_t* v, int64_t v_stride, int64_t n_kv, int head_dim_v,
                      bool vec_dot, float* out, float* scratch);
void round_f16_ref(float* x, int64_t n);

// Gated DeltaNet references (kernels.h OpKernels states each contract;
// ref_linear_attn.cpp), and the ggml_vec_dot_f32 summation order they share.
struct DeltaRuleArgs;
float dot_f32_ggml_ref(const float* x, const float* y, int64_t n);
void ssm_conv_ref(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out);
void l2_norm_ref(const float* x, int64_t n, float eps, float* y);
void rms_norm_gated_ref(const float* x, const float* w, const float* z, int64_t n, float eps, float* out);
void delta_rule_ref(const DeltaRuleArgs& a);

// Vision encoder references (kernels.h OpKernels states each contract;
// ref_vision_ops.cpp): LayerNorm with weight and bias, tanh and erf GELU.
void layer_norm_ref(const float* x, const float* w, const float* b, int64_t n, float eps, float* y);
void gelu_tanh_ref(const float* x, int64_t n, float* y);
void gelu_erf_ref(const float* x, int64_t n, float* y);

// The packed GEMM's block (kernels.h GemmBlock, gemm.h; ref_gemm.cpp): per
// output acc = fma(float(W[i][k]), x[t][k], acc) for k = 0 .. cols-1 from +0.
// The scalar tier's GemmKernels::block; pack is unused.
void gemm_block_ref(const GemmBlock& b);

}  // namespace les::kernels
