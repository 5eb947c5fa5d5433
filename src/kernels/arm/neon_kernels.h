// Internal: the NEON (AArch64 Advanced SIMD) kernels behind fill_neon_table().
//
// Baseline is armv8-a NEON, which every AArch64 CPU has. Where the compiler
// targets the dot-product extension (__ARM_FEATURE_DOTPROD, e.g.
// -march=armv8.2-a+dotprod) the int8 dot products use SDOT instead of the
// widening multiply + pairwise-add sequence; the integer results are the same.
//
// Every function has the contract of its KernelTable slot (kernels.h):
//   vec_dot_<W>_<X>_neon(n, s, w, x): s[0] = dot of one weight row `w` of type W
//     (n elements, n a multiple of W's and X's block sizes) with activations `x`
//     already quantised to X. Integer block sums are exact; only the float
//     accumulation order differs from the scalar reference.
//   quantize_row_<T>_neon(x, y, n): n floats (n a multiple of T's block size) to
//     blocks of T, byte-identical to the scalar reference quantiser.
// Math source: the block layouts in block_formats.h (ggml's ggml-common.h).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "kernels/block_formats.h"
#include "kernels/ref.h"

namespace les::kernels {

// Activation quantisers.
void quantize_row_q8_0_neon(const float* x, void* y, int64_t n);
void quantize_row_q8_1_neon(const float* x, void* y, int64_t n);
void quantize_row_q8_K_neon(const float* x, void* y, int64_t n);

// Dot products against Q8_0 / Q8_1 activations (32-element blocks).
void vec_dot_q4_0_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_0_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q8_0_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq4_nl_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_1_q8_1_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_1_q8_1_neon(int64_t n, float* s, const void* w, const void* x);

// K-quant dot products against Q8_K activations (256-element super-blocks).
// block_sums_* return the integer sums of one super-block (KQuantBlockSums,
// ref.h), bit-identical to block_sums_*_ref; the vec_dot_* results are
// bit-identical to vec_dot_*_ref.
KQuantBlockSums block_sums_q2_K_q8_K_neon(const block_q2_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q3_K_q8_K_neon(const block_q3_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q4_K_q8_K_neon(const block_q4_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q5_K_q8_K_neon(const block_q5_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q6_K_q8_K_neon(const block_q6_K& w, const block_q8_K& x);
void vec_dot_q2_K_q8_K_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q3_K_q8_K_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_K_q8_K_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_K_q8_K_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q6_K_q8_K_neon(int64_t n, float* s, const void* w, const void* x);

// Float dot products (any n >= 0): F16 x F16, BF16 x BF16, F32 x F32, all
// accumulated in F32 (the scalar reference may accumulate in double).
void vec_dot_f16_f16_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_bf16_bf16_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_f32_f32_neon(int64_t n, float* s, const void* w, const void* x);

}  // namespace les::kernels
