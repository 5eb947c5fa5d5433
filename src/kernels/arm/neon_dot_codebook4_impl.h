// NEON dot products of the 4-bit codebook formats: IQ4_XS against Q8_K
// (bit-identical to vec_dot_iq4_xs_q8_K_ref: the exact int32 isum of each
// super-block, then the reference's acc += float(isum) * (dx * dw)) and MXFP4
// against Q8_0 (exact int32 block sums, F32 accumulation in four lanes: the
// order differs from the reference, within the derived bound of
// tests/kernels/test_simd_vs_scalar.cpp). The 4-bit codes index their 16
// levels with TBL. Source: block_formats.h, block_elements.h.
//
// Internal: included once per instruction-set variant by a .cpp that defines
// LES_NEON_KERNEL(name) (neon_codebook4.cpp: _neon, neon_codebook4_dotprod.cpp:
// _neon_dotprod); both are built with -ffp-contract=off (LesKernels.cmake), so
// the float steps are the reference's. No include guard on purpose.
#include <arm_neon.h>

#include <cstddef>
#include <cstring>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/block_formats.h"

namespace les::kernels {
namespace {

using neon::dot_s8x2;
using neon::high_nibbles;
using neon::load_f16;
using neon::load_f32;
using neon::low_nibbles;

// IQ4_XS block at byte address w against the Q8_K block at x (any alignment).
int32_t isum_iq4_xs(const uint8_t* w, const uint8_t* x) {
  const int8x16_t table = vld1q_s8(kIQ4NLValues);
  uint32_t sl;
  uint16_t sh;
  std::memcpy(&sl, w + offsetof(block_iq4_xs, scales_l), 4);
  std::memcpy(&sh, w + offsetof(block_iq4_xs, scales_h), 2);
  const uint8_t* qs = w + offsetof(block_iq4_xs, qs);
  const int8_t* y = reinterpret_cast<const int8_t*>(x + offsetof(block_q8_K, qs));
  int32x4_t acc = vdupq_n_s32(0);
  for (int j = 0; j < kQKK / 32; ++j, qs += 16, y += 32) {
    const int scale = static_cast<int>(((sl >> (4 * j)) & 0x0F) | (((sh >> (2 * j)) & 3) << 4)) - 32;
    const uint8x16_t q = vld1q_u8(qs);
    const int32x4_t d = dot_s8x2(vqtbl1q_s8(table, low_nibbles(q)), vld1q_s8(y), vqtbl1q_s8(table, high_nibbles(q)),
                                 vld1q_s8(y + 16));
    acc = vmlaq_n_s32(acc, d, scale);
  }
  return vaddvq_s32(acc);
}

}  // namespace

void LES_NEON_KERNEL(vec_dot_iq4_xs_q8_K)(int64_t n, float* s, const void* w, const void* x) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b, wb += sizeof(block_iq4_xs), xb += sizeof(block_q8_K)) {
    const float d = load_f32(xb + offsetof(block_q8_K, d)) * load_f16(wb + offsetof(block_iq4_xs, d));
    const float term = static_cast<float>(isum_iq4_xs(wb, xb)) * d;
    acc += term;
  }
  *s = acc;
}

void LES_NEON_KERNEL(vec_dot_mxfp4_q8_0)(int64_t n, float* s, const void* w, const void* x) {
  const int8x16_t table = vld1q_s8(kMXFP4Values);
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (int64_t b = 0; b < n / kQKMXFP4; ++b, wb += sizeof(block_mxfp4), xb += sizeof(block_q8_0)) {
    const uint8x16_t q = vld1q_u8(wb + offsetof(block_mxfp4, qs));
    const int8_t* y = reinterpret_cast<const int8_t*>(xb + offsetof(block_q8_0, qs));
    const int32x4_t d = dot_s8x2(vqtbl1q_s8(table, low_nibbles(q)), vld1q_s8(y), vqtbl1q_s8(table, high_nibbles(q)),
                                 vld1q_s8(y + 16));
    const float scale = e8m0_half_to_fp32(wb[offsetof(block_mxfp4, e)]) * load_f16(xb + offsetof(block_q8_0, d));
    acc = vmlaq_n_f32(acc, vcvtq_f32_s32(d), scale);
  }
  *s = vaddvq_f32(acc);
}

}  // namespace les::kernels
