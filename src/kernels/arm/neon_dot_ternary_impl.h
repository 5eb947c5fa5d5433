// NEON dot products of the ternary formats TQ1_0 and TQ2_0 against Q8_K,
// bit-identical to the scalar references (ref_ternary.cpp): the exact int32
// isum of each super-block, then the reference's acc += float(isum) * (dx * dw).
// The codes are taken as digits u = code + 1 (0..2, TQ2_0 0..3) and the offset
// returns as isum = sum u * q8 - sum q8 (Q8_K's bsums). TQ1_0's base-3 digit n
// of a byte b is ((uint8_t)(b * 3^n) * 3) >> 8: the byte products wrap mod 256
// as 8-bit adds do, and (q * 3) >> 8 = (q > 85) + (q > 170).
//
// Internal: included once per instruction-set variant by a .cpp that defines
// LES_NEON_KERNEL(name) (neon_ternary.cpp: _neon, neon_ternary_dotprod.cpp:
// _neon_dotprod); both are built with -ffp-contract=off (LesKernels.cmake).
// No include guard on purpose.
#include <arm_neon.h>

#include <cstddef>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/block_formats.h"

namespace les::kernels {
namespace {

using neon::as_s8;
using neon::dot_s8;
using neon::load_f16;
using neon::load_f32;

inline uint8x16_t times3(uint8x16_t q) { return vaddq_u8(q, vaddq_u8(q, q)); }
inline int8x16_t digit(uint8x16_t q) {
  return as_s8(vaddq_u8(vshrq_n_u8(vcgtq_u8(q, vdupq_n_u8(85)), 7), vshrq_n_u8(vcgtq_u8(q, vdupq_n_u8(170)), 7)));
}

// sum of the 256 codes of a Q8_K block (its 16 bsums) at byte address x.
inline int32_t sum_q8(const uint8_t* x) {
  const uint8_t* b = x + offsetof(block_q8_K, bsums);
  const int16x8_t s0 = vreinterpretq_s16_u8(vld1q_u8(b)), s1 = vreinterpretq_s16_u8(vld1q_u8(b + 16));
  return vaddvq_s32(vaddq_s32(vpaddlq_s16(s0), vpaddlq_s16(s1)));
}

int32_t usum_tq1_0(const uint8_t* w, const int8_t* y) {
  const uint8_t* qs = w + offsetof(block_tq1_0, qs);
  uint8x16_t q0 = vld1q_u8(qs), q1 = vld1q_u8(qs + 16), q2 = vld1q_u8(qs + 32);
  int32x4_t acc = vdupq_n_s32(0);
  for (int n = 0; n < 5; ++n) {
    if (n > 0) q0 = times3(q0), q1 = times3(q1), q2 = times3(q2);
    acc = dot_s8(acc, digit(q0), vld1q_s8(y + 32 * n));       // elements 32 n .. + 15
    acc = dot_s8(acc, digit(q1), vld1q_s8(y + 32 * n + 16));  // elements 32 n + 16 .. + 31
    acc = dot_s8(acc, digit(q2), vld1q_s8(y + 160 + 16 * n)); // elements 160 + 16 n ..
  }
  // Elements 240..255: digit n of qh[j] is element 240 + 4 n + j.
  static constexpr uint8_t kPow3[4] = {1, 3, 9, 27};
  const uint8_t* qh = w + offsetof(block_tq1_0, qh);
  uint8_t h[16];
  for (int n = 0; n < 4; ++n)
    for (int j = 0; j < 4; ++j) h[4 * n + j] = static_cast<uint8_t>(qh[j] * kPow3[n]);
  acc = dot_s8(acc, digit(vld1q_u8(h)), vld1q_s8(y + 240));
  return vaddvq_s32(acc);
}

int32_t usum_tq2_0(const uint8_t* w, const int8_t* y) {
  const uint8_t* qs = w + offsetof(block_tq2_0, qs);
  const uint8x16_t three = vdupq_n_u8(3);
  int32x4_t acc = vdupq_n_s32(0);
  for (int c = 0; c < 2; ++c) {
    uint8x16_t q0 = vld1q_u8(qs + 32 * c), q1 = vld1q_u8(qs + 32 * c + 16);
    for (int l = 0; l < 4; ++l, q0 = vshrq_n_u8(q0, 2), q1 = vshrq_n_u8(q1, 2)) {
      acc = dot_s8(acc, as_s8(vandq_u8(q0, three)), vld1q_s8(y + 128 * c + 32 * l));
      acc = dot_s8(acc, as_s8(vandq_u8(q1, three)), vld1q_s8(y + 128 * c + 32 * l + 16));
    }
  }
  return vaddvq_s32(acc);
}

template <typename Block, int32_t (*USum)(const uint8_t*, const int8_t*)>
float dot_ternary(int64_t n, const void* w, const void* x) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b, wb += sizeof(Block), xb += sizeof(block_q8_K)) {
    const int32_t isum = USum(wb, reinterpret_cast<const int8_t*>(xb + offsetof(block_q8_K, qs))) - sum_q8(xb);
    const float d = load_f32(xb + offsetof(block_q8_K, d)) * load_f16(wb + offsetof(Block, d));
    const float term = static_cast<float>(isum) * d;
    acc += term;
  }
  return acc;
}

}  // namespace

void LES_NEON_KERNEL(vec_dot_tq1_0_q8_K)(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_ternary<block_tq1_0, usum_tq1_0>(n, w, x);
}

void LES_NEON_KERNEL(vec_dot_tq2_0_q8_K)(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_ternary<block_tq2_0, usum_tq2_0>(n, w, x);
}

}  // namespace les::kernels
