// Scalar reference kernels of the lattice i-quants (IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M): dequantisation and the dot product against
// Q8_K, the activation format ggml pairs each with. Plain, obviously correct
// C++, the test oracle of every SIMD tier; conventions as ref.h (n a multiple
// of 256, rows at any byte address, no FMA contraction, pure functions).
//
// Dequantisation is bit-exact with ggml's dequantize_row_iq* (checked against
// gguf-py's dequantize on tests/kernels/data/iquants): per sub-block scale
//   IQ2_*:   db = (d * (0.5 + s)) * 0.25      x = db * code
//   IQ3_XXS: db = (d * (0.5 + s)) * 0.5       x = db * code
//   IQ3_S:   db = d * (1 + 2 s)               x = db * code
//   IQ1_*:   dl = d * (1 + 2 s)               x = dl * (coordinate +- 0.125)
// with code the signed grid coordinate (iq_elements.h); each a rounded F32 op.
//
// Dot product: per block the exact int32
//   isum = sum over sub-blocks (or half sub-blocks) of (2 s + 1) * sum code(e) * q8[e]
// (IQ1: code8(e) = 8 * coordinate +- 1 in place of code), then, block after
// block, acc += float(isum) * (d_w * d_x) in one F32 accumulator from 0, and
// finally s = acc * F with the exact power of two F = 1/8 (IQ2_*, IQ1_*),
// 1/4 (IQ3_XXS), 1 (IQ3_S). This is ggml's generic vec_dot arithmetic (IQ1's
// (sumi + sumi1 / 8) scaled by 8, exactly); SIMD tiers keep isum bit-exactly
// and hold the float sum to the bound of tests/kernels/test_simd_vs_scalar.cpp.
#pragma once

#include <cstdint>

#include "kernels/iq_block_formats.h"
#include "kernels/ref.h"
#include "kernels/weight_quantizers.h"

namespace les::kernels {

void dequantize_row_iq2_xxs_ref(const block_iq2_xxs* x, float* y, int64_t n);
void dequantize_row_iq2_xs_ref(const block_iq2_xs* x, float* y, int64_t n);
void dequantize_row_iq2_s_ref(const block_iq2_s* x, float* y, int64_t n);
void dequantize_row_iq3_xxs_ref(const block_iq3_xxs* x, float* y, int64_t n);
void dequantize_row_iq3_s_ref(const block_iq3_s* x, float* y, int64_t n);
void dequantize_row_iq1_s_ref(const block_iq1_s* x, float* y, int64_t n);
void dequantize_row_iq1_m_ref(const block_iq1_m* x, float* y, int64_t n);

// Signature VecDotFn (kernels.h); x in Q8_K.
void vec_dot_iq2_xxs_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq2_xs_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq2_s_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq3_xxs_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq3_s_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq1_s_q8_K_ref(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq1_m_q8_K_ref(int64_t n, float* s, const void* w, const void* x);

// The exact int32 isum of one block against one Q8_K block, as defined above
// (msum is 0), so SIMD tests can check their integer part bit-exactly.
KQuantBlockSums block_sums_iq2_xxs_q8_K_ref(const block_iq2_xxs& w, const block_q8_K& x);
KQuantBlockSums block_sums_iq2_xs_q8_K_ref(const block_iq2_xs& w, const block_q8_K& x);
KQuantBlockSums block_sums_iq2_s_q8_K_ref(const block_iq2_s& w, const block_q8_K& x);
KQuantBlockSums block_sums_iq3_xxs_q8_K_ref(const block_iq3_xxs& w, const block_q8_K& x);
KQuantBlockSums block_sums_iq3_s_q8_K_ref(const block_iq3_s& w, const block_q8_K& x);
KQuantBlockSums block_sums_iq1_s_q8_K_ref(const block_iq1_s& w, const block_q8_K& x);
KQuantBlockSums block_sums_iq1_m_q8_K_ref(const block_iq1_m& w, const block_q8_K& x);

// Weight quantisers (ref_quantize_iquants.cpp) of the sign-and-magnitude
// formats: row x of n floats (n a multiple of 256) into blocks at y.
// importance: null or n non-negative imatrix weights; ggml requires one for
// IQ2_XXS, IQ2_XS, IQ2_S and IQ3_XXS (`les quantize` does too), the
// quantiser itself accepts null. Each element weighs
//   w_i = (importance_i + 0.5 mean(importance)) * sqrt(sigma^2 + x_i^2)
// (sigma^2: the block's mean square; without importance the first factor is
// 1), and each block minimises sum w_i (x_i - xhat_i)^2 by:
// 1. signs: x_i's own, except that where 7 sign bits and a parity bit are
//    stored (IQ2_XXS, IQ2_XS, IQ3_XXS) a sign group of 8 with an odd number
//    of negatives flips the element of least w_i x_i^2;
// 2. per scale group, the best continuous unit u (a sweep around
//    max|x| / largest coordinate, then least squares for the chosen points),
//    every grid group taking its exact best grid point for u (an argmin of
//    u^2 A_p - 2 u B_p over all points p, A_p = sum w p^2, B_p = sum w |x| p);
// 3. the F16 super-block scale d among 9 candidates around the one mapping
//    the largest unit to k = 15, each scale group taking the best of the
//    three integer scales k nearest its unit, the points re-chosen for the
//    stored d and k.
// The bytes do not depend on the kernel tier (scalar code only).
void quantize_row_iq2_xxs_ref(const float* x, block_iq2_xxs* y, int64_t n, const float* importance);
void quantize_row_iq2_xs_ref(const float* x, block_iq2_xs* y, int64_t n, const float* importance);
void quantize_row_iq2_s_ref(const float* x, block_iq2_s* y, int64_t n, const float* importance);
void quantize_row_iq3_xxs_ref(const float* x, block_iq3_xxs* y, int64_t n, const float* importance);
void quantize_row_iq3_s_ref(const float* x, block_iq3_s* y, int64_t n, const float* importance);

// The quantisers above as WeightQuantizerImpl (weight_quantizers.h; the
// FitKernels are not used); null for other types.
WeightQuantizerImpl lattice_weight_quantizer_impl(GgmlType type) noexcept;

// The power of two F above for type t (0 for a type that is not a lattice i-quant).
float iq_dot_factor(GgmlType t) noexcept;

// The F16 super-block scale d of a block (IQ1_M assembles it from its scales).
inline fp16_t iq_block_d(const block_iq2_xxs& b) { return b.d; }
inline fp16_t iq_block_d(const block_iq2_xs& b) { return b.d; }
inline fp16_t iq_block_d(const block_iq2_s& b) { return b.d; }
inline fp16_t iq_block_d(const block_iq3_xxs& b) { return b.d; }
inline fp16_t iq_block_d(const block_iq3_s& b) { return b.d; }
inline fp16_t iq_block_d(const block_iq1_s& b) { return b.d; }
fp16_t iq_block_d(const block_iq1_m& b);

}  // namespace les::kernels
