// Internal: the NEON (AArch64 Advanced SIMD) kernels behind fill_neon_table().
//
// Baseline is armv8-a NEON, which every AArch64 CPU has: the int8 dot
// products widen with SMULL and accumulate with SADALP. The same int8 kernels
// are compiled a second time for the dot-product extension (SDOT, FEAT_DotProd,
// Cortex-A55/A75 and later) with the suffix _neon_dotprod (neon_dotprod.cpp);
// fill_neon_table() picks them at run time when neon_dotprod_supported().
// In a build whose -march already includes dotprod both sets use SDOT.
// Integer results are identical either way.
//
// Every function has the contract of its KernelTable slot (kernels.h):
//   vec_dot_<W>_<X>_neon(n, s, w, x): s[0] = dot of one weight row `w` of type W
//     (n elements, n a multiple of W's and X's block sizes) with activations `x`
//     already quantised to X. Integer block sums are exact; for the 32-element
//     formats only the float accumulation order differs from the scalar reference.
//   quantize_row_<T>_neon(x, y, n): n floats (n a multiple of T's block size) to
//     blocks of T, byte-identical to the scalar reference quantiser.
// Math source: the block layouts in block_formats.h (ggml's ggml-common.h).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "kernels/block_formats.h"
#include "kernels/kernels.h"
#include "kernels/ref.h"

namespace les::kernels {

// Activation quantisers.
void quantize_row_q8_0_neon(const float* x, void* y, int64_t n);
void quantize_row_q8_1_neon(const float* x, void* y, int64_t n);
void quantize_row_q8_K_neon(const float* x, void* y, int64_t n);

// The int8 kernels, once per variant (suffix _neon: baseline; _neon_dotprod:
// SDOT, callable only when neon_dotprod_supported()).
//
// 32-element formats against Q8_0 / Q8_1 activations.
//
// K-quants against Q8_K activations (256-element super-blocks). block_sums_*
// return the integer sums of one super-block (KQuantBlockSums, ref.h),
// bit-identical to block_sums_*_ref; the vec_dot_* results are bit-identical
// to vec_dot_*_ref.

// Baseline variant.
void vec_dot_q4_0_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_0_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q8_0_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq4_nl_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_1_q8_1_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_1_q8_1_neon(int64_t n, float* s, const void* w, const void* x);
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
// Codebook formats (neon_codebook4.cpp): IQ4_XS bit-identical to the reference,
// MXFP4 within the 32-element formats' float-order bound.
void vec_dot_iq4_xs_q8_K_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_mxfp4_q8_0_neon(int64_t n, float* s, const void* w, const void* x);
// Ternary formats (neon_ternary.cpp), bit-identical to the reference.
void vec_dot_tq1_0_q8_K_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_tq2_0_q8_K_neon(int64_t n, float* s, const void* w, const void* x);

// SDOT variant (neon_dotprod.cpp).
void vec_dot_q4_0_q8_0_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_0_q8_0_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q8_0_q8_0_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq4_nl_q8_0_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_1_q8_1_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_1_q8_1_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
KQuantBlockSums block_sums_q2_K_q8_K_neon_dotprod(const block_q2_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q3_K_q8_K_neon_dotprod(const block_q3_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q4_K_q8_K_neon_dotprod(const block_q4_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q5_K_q8_K_neon_dotprod(const block_q5_K& w, const block_q8_K& x);
KQuantBlockSums block_sums_q6_K_q8_K_neon_dotprod(const block_q6_K& w, const block_q8_K& x);
void vec_dot_q2_K_q8_K_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q3_K_q8_K_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q4_K_q8_K_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q5_K_q8_K_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_q6_K_q8_K_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_iq4_xs_q8_K_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_mxfp4_q8_0_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_tq1_0_q8_K_neon_dotprod(int64_t n, float* s, const void* w, const void* x);
void vec_dot_tq2_0_q8_K_neon_dotprod(int64_t n, float* s, const void* w, const void* x);

// Lattice i-quants (IQ1_S ... IQ3_S, neon_iquants_impl.h): set vec_dot and
// vec_dot_multi of each, bit-identical to the scalar reference (ref_iquants.h).
// The _neon_dotprod variant is callable only when neon_dotprod_supported().
void install_iquant_kernels_neon(KernelTable& t);
void install_iquant_kernels_neon_dotprod(KernelTable& t);

// Float dot products (any n >= 0): F16 x F16, BF16 x BF16, F32 x F32, all
// accumulated in F32 (the scalar reference may accumulate in double).
void vec_dot_f16_f16_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_bf16_bf16_neon(int64_t n, float* s, const void* w, const void* x);
void vec_dot_f32_f32_neon(int64_t n, float* s, const void* w, const void* x);

// Gated DeltaNet OpKernels (kernels.h), neon_linear_attn.cpp; bit-identical to
// the scalar references.
void ssm_conv_neon(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out);
void l2_norm_neon(const float* x, int64_t n, float eps, float* y);
void rms_norm_gated_neon(const float* x, const float* w, const float* z, int64_t n, float eps, float* out);
void delta_rule_neon(const DeltaRuleArgs& a);

// True if this CPU executes SDOT: always when compiled with dotprod, else from
// the Linux auxiliary vector (HWCAP_ASIMDDP); false elsewhere. Thread-safe.
bool neon_dotprod_supported() noexcept;

// fill_neon_table() with an explicit choice of int8 kernels (the tests fill
// both variants). use_dotprod requires neon_dotprod_supported().
void fill_neon_table_variant(KernelTable& t, bool use_dotprod);

}  // namespace les::kernels
