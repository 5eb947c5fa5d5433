// Internal: the AVX-512 kernels (signatures VecDotFn / VecDotMultiFn,
// kernels.h) that fill_avx512_table() installs. Defined in avx512*.cpp; call
// only through the table (they execute AVX-512 F/BW/VL/VNNI instructions).
// Each vec_dot_multi_X is bit-identical per row to vec_dot_X (same template).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace les::kernels::avx512 {

void vec_dot_f16(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_K_q8_K(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q3_K_q8_K(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_K_q8_K(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q6_K_q8_K(int64_t n, float* s, const void* w, const void* x);

// VecDotMultiFn of the same types: avx512_kernels.cpp (F16, Q4_0, Q5_0)
// and avx512_kquants.cpp (Q3_K, Q4_K, Q5_K, Q6_K).
void vec_dot_multi_f16(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx);
void vec_dot_multi_q4_0_q8_0(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx);
void vec_dot_multi_q5_0_q8_0(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx);
void vec_dot_multi_q3_K_q8_K(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx);
void vec_dot_multi_q4_K_q8_K(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx);
void vec_dot_multi_q5_K_q8_K(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx);
void vec_dot_multi_q6_K_q8_K(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx);

// OpKernels (kernels.h), avx512_ops.cpp.
void exp16(const float* x, float* y);
void attn_f16_kq(const float* q, const uint8_t* k, int64_t k_stride, int64_t n_kv, int head_dim, bool vec_dot,
                 float* scores);
void attn_f16_kqv(const float* p, const uint8_t* v, int64_t v_stride, int64_t n_kv, int head_dim_v, bool vec_dot,
                  float* out, float* scratch);
// Multi-query gemm-order attention sums (kernels.h OpKernels), avx512_attention.cpp.
void attn_f16_kq_multi(const float* q, int64_t q_stride, int nq, const uint8_t* k, int64_t k_stride, int64_t n_kv,
                       int head_dim, float* scores, int64_t s_stride, float* scratch);
void attn_f16_kqv_multi(const float* p, int64_t p_stride, const int64_t* n_kv, int nq, const uint8_t* v,
                        int64_t v_stride, int head_dim_v, float* out, int64_t out_stride, float* scratch);

// Gated DeltaNet OpKernels (kernels.h), avx512_linear_attn.cpp.
void ssm_conv(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out);
void l2_norm(const float* x, int64_t n, float eps, float* y);
void rms_norm_gated(const float* x, const float* w, const float* z, int64_t n, float eps, float* out);
void delta_rule(const DeltaRuleArgs& a);

}  // namespace les::kernels::avx512
