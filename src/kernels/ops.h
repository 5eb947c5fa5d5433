// Scalar element-wise and attention operations of the transformer forward pass.
//
// Dependency-free reference implementations (the test oracle for any SIMD
// versions), written to follow ggml's CPU semantics so that results match
// llama.cpp up to summation order:
//  * RMSNorm: y = x / sqrt(mean(x^2) + eps) * w, mean accumulated in double.
//  * RoPE and its frequency scaling: kernels/rope.h.
//  * Attention, F16 cache (no flash attention): scores = scale * (f16(q)·K),
//    causal, softmax in F32, probabilities rounded to F16, then summed against V,
//    exactly the precision steps of ggml's mul_mat(K, q) / soft_max_ext /
//    mul_mat(V, kq), in the same summation order as ggml's x86 AVX-512 build
//    (F16DotOrder) over a KV view padded with masked positions, and with ggml's
//    vectorised exp (expf_ggml). Q8_0 cache: see attention_head_q8_0.
//  * softmax / swiglu: ggml's x86 AVX-512 order (16-element chunks through
//    expf_ggml, chunk sums reduced like _mm512_reduce_add_ps), scalar std::exp
//    for the tail.
//  * The 16-element exps and the F16 attention dot products run on the best
//    kernel tier's OpKernels (kernels.h), which every tier computes bit-identically.
// Why bit-level order matters: on Q8_0 weights every matmul input is rounded to
// 8 bits, so a 1-ulp difference that moves one activation across a rounding
// boundary changes it by a whole Q8_0 step (1/127 of its block's max); on
// random-weight models such a flip grows to ~0.1 in the logits.
//
// Thread-safety: pure functions on caller-owned buffers.
#pragma once

#include <cstdint>

#include "kernels/fp16.h"
#include "kernels/rope.h"  // RoPE (rope, rope_imrope, RopeScaling) lives there

namespace les::kernels {
struct OpKernels;
}  // namespace les::kernels

namespace les::ops {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * (w ? w[i] : 1), i < n. out may alias x.
void rms_norm(const float* x, const float* w, int64_t n, float eps, float* out);

// exp(x) computed as ggml's AVX-512 ggml_v_expf does (range reduction to
// 2^n * e^b, degree-5 polynomial with fused multiply-adds; at most ~1.5 ulp from
// the true value, not correctly rounded); 0 below about -103.9, inf above 88.7.
float expf_ggml(float x);

// Sum of 16 floats in the order of _mm512_reduce_add_ps: l[i] + l[i+8], then
// + [i+4], then (0+2) + (1+3).
float reduce_add16(const float* l);

// In place: x[i] = exp(x[i] - max) / sum, i < n, as ggml_vec_soft_max_f32: full
// 16-element chunks use expf_ggml and are summed by reduce_add16 into a double;
// the tail uses std::exp, each value added to the double sum, unless `padded`
// (attention over ggml's padded KV view), where the tail is one more chunk whose
// missing lanes are 0. Then x[i] *= float(1 / sum).
void softmax(float* x, int64_t n, bool padded = false);

// x * sigmoid(x), computed as x / (1 + exp(-x)) (ggml_silu_f32).
float silu(float x);

// y[i] = silu(x[i]), i < n, as ggml_vec_silu_f32 on x86 AVX-512: each full
// chunk of 16 as x / (1 + expf_ggml(0 - x)), the tail through silu(). y may alias x.
void silu_row(const float* x, int64_t n, float* y);

// 1 / (1 + exp(-x)) with the C library's expf (ggml's sigmoid op).
float sigmoid(float x);

// log(1 + exp(x)), or x itself above 20 (ggml's softplus op), in F32 with the C library.
float softplus(float x);

// out[i] = silu(gate[i]) * up[i], i < n (one row: ggml_vec_swiglu_f32 on
// x86 AVX-512, 16-element chunks through expf_ggml, the tail through silu()).
// out may alias gate or up.
void swiglu(const float* gate, const float* up, int64_t n, float* out);

// Summation order of an F16 dot product (see attention_head_f16): `gemm` is
// llamafile's tinyBLAS (ggml's mul_mat for batches of >= 2 tokens), `vec_dot`
// is ggml_vec_dot_f16 (one-token batches).
enum class F16DotOrder { gemm, vec_dot };

// Scratch floats attention_head_f16 needs for n_kv positions.
int64_t attention_head_f16_scratch(int64_t n_kv, int head_dim, int head_dim_v);

// Causal attention of one query head over a KV cache stored as F16 rows.
//   qh:  head_dim floats (this query head).
//   k:   n_kv positions; position j's head at k + j * kv_stride_k bytes, head_dim halves.
//   v:   n_kv positions; position j's head at v + j * kv_stride_v bytes, head_dim_v halves.
//   out: head_dim_v floats.
//   scratch: attention_head_f16_scratch(n_kv, head_dim, head_dim_v) floats.
//   order: gemm when the query belongs to a batch of >= 2 tokens, else vec_dot.
// Positions kv_first..n_kv-1 are visible (the caller passes n_kv = pos + 1 for
// causality, kv_first > 0 for a sliding window); the scores of earlier
// positions are computed and masked to -inf before the softmax, as ggml's
// masked soft_max does, so the sums run in the same lanes as a full window.
// Each score: 16-lane dot (order) of f16(q) and K_j, times scale; softmax
// (padded); each output d: 16-lane dot (order) over j of f16(p_j) and V_j[d].
// The dots run on `kernels` (null: the best tier's, default_kernel_table();
// every tier gives the same bits, kernels.h OpKernels).
// Rows may sit at any byte address. Thread-safety: pure; distinct scratch per thread.
void attention_head_f16(const float* qh, const uint8_t* k, int64_t kv_stride_k, const uint8_t* v,
                        int64_t kv_stride_v, int64_t n_kv, int head_dim, int head_dim_v, float scale, float* out,
                        float* scratch, F16DotOrder order, const kernels::OpKernels* kernels = nullptr,
                        int64_t kv_first = 0);

// Scratch floats attention_queries_f16 needs for nq <= kernels::kAttnMultiMax
// queries of at most n_kv_max positions.
int64_t attention_queries_f16_scratch(int64_t n_kv_max, int nq, int head_dim, int head_dim_v);

// attention_head_f16 in the gemm order for nq <= kernels::kAttnMultiMax query
// heads that share one KV head (several tokens of a batch, and the query heads
// of a GQA group): query i (head_dim floats at q[i]) over positions
// 0..n_kv[i]-1 of k / v (layout and strides as attention_head_f16) writes
// head_dim_v floats to out[i]. Each out[i] is bit-identical to
// attention_head_f16(q[i], ..., n_kv[i], ..., F16DotOrder::gemm) on the same
// kernels: the multi-query kernels (OpKernels::attn_f16_kq_multi, _kqv_multi;
// when a tier has none, the single-query ones per query) read each K and V row
// once for all queries. Scores past a query's n_kv (up to the largest n_kv)
// are computed from rows that must be readable and are dropped. kv_first:
// null, or each query's first visible position (attention_head_f16's kv_first).
//   scratch: attention_queries_f16_scratch(max n_kv, nq, head_dim, head_dim_v) floats.
// Thread-safety: pure; distinct scratch per thread.
void attention_queries_f16(const float* const* q, const int64_t* n_kv, int nq, const uint8_t* k, int64_t kv_stride_k,
                           const uint8_t* v, int64_t kv_stride_v, int head_dim, int head_dim_v, float scale,
                           float* const* out, float* scratch, const kernels::OpKernels* kernels = nullptr,
                           const int64_t* kv_first = nullptr);

// All heads of one query token: query head h uses KV head h / (n_head / n_head_kv) (GQA).
//   q:   n_head * head_dim floats (head-major); out: n_head * head_dim_v floats.
//   k/v: rows of n_head_kv * head_dim (head_dim_v) halves, kv_stride_k/v halves apart.
//   scratch: attention_head_f16_scratch(n_kv, head_dim, head_dim_v) floats.
//   Precondition: n_head % n_head_kv == 0.
void attention_f16(const float* q, const fp16_t* k, int64_t kv_stride_k, const fp16_t* v, int64_t kv_stride_v,
                   int64_t n_kv, int n_head, int n_head_kv, int head_dim, int head_dim_v, float scale, float* out,
                   float* scratch, F16DotOrder order = F16DotOrder::vec_dot);

// Scratch floats attention_head_q8_0 needs for n_kv positions.
int64_t attention_head_q8_0_scratch(int64_t n_kv, int head_dim, int head_dim_v);

// Causal attention of one query head over a KV cache stored as Q8_0 rows
// (ggml's flash-attention semantics for a Q8_0 cache, which is how llama.cpp
// runs one): the query head is quantised to Q8_0 with `quantize_q8_0`,
// score_j = scale * dot_q8_0(K_j, q8) with `dot_q8_0_q8_0`, softmax in F32
// (ops::softmax), out = sum_j p_j * dequant(V_j) in F32 (`dequantize_q8_0`).
// Arguments as attention_head_f16 (strides in bytes; head_dim and head_dim_v
// multiples of 32); scratch holds attention_head_q8_0_scratch(...) floats.
// The three functions come from a KernelTable (any tier: they are bit-exact).
using AttnVecDotFn = void (*)(int64_t n, float* s, const void* w, const void* x);
using AttnQuantizeFn = void (*)(const float* x, void* y, int64_t n);
using AttnDequantizeFn = void (*)(const void* x, float* y, int64_t n);
// kv_first: positions before it are masked out (a sliding window), as in attention_head_f16.
void attention_head_q8_0(const float* qh, const uint8_t* k, int64_t kv_stride_k, const uint8_t* v,
                         int64_t kv_stride_v, int64_t n_kv, int head_dim, int head_dim_v, float scale, float* out,
                         float* scratch, AttnVecDotFn dot_q8_0_q8_0, AttnQuantizeFn quantize_q8_0,
                         AttnDequantizeFn dequantize_q8_0, int64_t kv_first = 0);

}  // namespace les::ops
