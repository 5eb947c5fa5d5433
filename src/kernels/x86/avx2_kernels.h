// Internal: the AVX2 kernels (signature VecDotFn, kernels.h) that
// fill_avx2_table() installs, and its activation quantisers. Defined in avx2*.cpp; call only through the
// table (they execute AVX2/FMA/F16C instructions).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace les::kernels::avx2 {

void vec_dot_f32(int64_t n, float* s, const void* w, const void* x);
void vec_dot_f16(int64_t n, float* s, const void* w, const void* x);
void vec_dot_bf16(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_1_q8_1(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_1_q8_1(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q8_0_q8_0(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq4_nl_q8_0(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q2_K_q8_K(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q3_K_q8_K(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_K_q8_K(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_K_q8_K(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q6_K_q8_K(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq4_xs_q8_K(int64_t n, float* s, const void* w, const void* x);  // avx2_codebook4.cpp
void vec_dot_mxfp4_q8_0(int64_t n, float* s, const void* w, const void* x);
void vec_dot_tq1_0_q8_K(int64_t n, float* s, const void* w, const void* x);  // avx2_ternary.cpp
void vec_dot_tq2_0_q8_K(int64_t n, float* s, const void* w, const void* x);

// VecDotMultiFn (kernels.h): bit-identical per activation row to the vec_dot above of the same type.
void vec_dot_multi_f16(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride, int nx);
void vec_dot_multi_q3_K_q8_K(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                             int nx);
void vec_dot_multi_q4_K_q8_K(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                             int nx);
void vec_dot_multi_q6_K_q8_K(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                             int nx);
void vec_dot_multi_iq4_xs_q8_K(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                               int nx);

// Sets vec_dot and vec_dot_multi of the lattice i-quants (IQ1_S ... IQ3_S),
// avx2_iquants.cpp: bit-identical to the scalar reference (ref_iquants.h).
void install_iquant_kernels(KernelTable& t);

// Dequantisers (DequantizeRowFn), avx2_codebook4.cpp: the scalar reference's bits.
void dequantize_row_iq4_xs(const void* x, float* y, int64_t n);
void dequantize_row_mxfp4(const void* x, float* y, int64_t n);

// Activation quantisers (QuantizeRowFn), byte-identical to the scalar reference.
void quantize_row_q8_0(const float* x, void* y, int64_t n);
void quantize_row_q8_1(const float* x, void* y, int64_t n);
void quantize_row_q8_K(const float* x, void* y, int64_t n);

// FitKernels (kernels.h), avx2_quant_fit.cpp: bit-identical to the scalar reference.
void fit_eval_symmetric(const float* x, const float* w, int n, int lo, int hi, const float* s, int n_cand,
                        double* sxl, double* sll);
void fit_eval_symmetric_table16(const float* x, const float* w, int n, const int8_t* levels, const float* s,
                                int n_cand, double* sxl, double* sll);
void fit_eval_affine(const float* x, const float* w, int n, float x0, int qmax, const float* s, int n_cand,
                     double* sq, double* sqq, double* sxq);

// OpKernels (kernels.h), avx2_ops.cpp.
void exp16(const float* x, float* y);
void attn_f16_kq(const float* q, const uint8_t* k, int64_t k_stride, int64_t n_kv, int head_dim, bool vec_dot,
                 float* scores);
void attn_f16_kqv(const float* p, const uint8_t* v, int64_t v_stride, int64_t n_kv, int head_dim_v, bool vec_dot,
                  float* out, float* scratch);
// Multi-query gemm-order attention sums (kernels.h OpKernels), avx2_ops.cpp.
void attn_f16_kq_multi(const float* q, int64_t q_stride, int nq, const uint8_t* k, int64_t k_stride, int64_t n_kv,
                       int head_dim, float* scores, int64_t s_stride, float* scratch);
void attn_f16_kqv_multi(const float* p, int64_t p_stride, const int64_t* n_kv, int nq, const uint8_t* v,
                        int64_t v_stride, int head_dim_v, float* out, int64_t out_stride, float* scratch);
void round_f16(float* x, int64_t n);

// Gated DeltaNet OpKernels (kernels.h), avx2_linear_attn.cpp.
void ssm_conv(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out);
void l2_norm(const float* x, int64_t n, float eps, float* y);
void rms_norm_gated(const float* x, const float* w, const float* z, int64_t n, float eps, float* out);
void delta_rule(const DeltaRuleArgs& a);

}  // namespace les::kernels::avx2
