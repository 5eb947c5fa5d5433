// NEON dot products of the 32-element "legacy" quantisation formats (Q4_0,
// Q5_0, Q8_0, IQ4_NL against Q8_0 activations; Q4_1, Q5_1 against Q8_1).
//
// Per block: an exact int32 dot of the 32 weight quants with the 32 activation
// quants, scaled by d_w * d_x in F32 (plus m_w * s_x for the _1 formats, s_x =
// d_x * sum(q_x) stored in the Q8_1 block). Source: block_formats.h.
//
// Internal: included once per instruction-set variant by a .cpp that defines
// LES_NEON_KERNEL(name) to give the exported functions that variant's suffix
// (neon_dot_int8.cpp: _neon, neon_dotprod.cpp: _neon_dotprod); no include guard on purpose.
#include <arm_neon.h>

#include <cstddef>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/block_formats.h"

namespace les::kernels {
namespace {

using neon::as_s8;
using neon::dot_s8x2;
using neon::load_f16;
using neon::high_nibbles;
using neon::low_nibbles;

// Bit i of the 32-bit little-endian qh (Q5_0/Q5_1) as 0x10 in byte i: returns
// the fifth bit of elements 0..15 (lo) and 16..31 (hi).
struct FifthBits {
  uint8x16_t lo, hi;
};
inline FifthBits fifth_bits(const uint8_t* qh) {
  static constexpr uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t bit = vld1q_u8(kBit);
  const uint8x16_t b01 = vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1]));
  const uint8x16_t b23 = vcombine_u8(vdup_n_u8(qh[2]), vdup_n_u8(qh[3]));
  const uint8x16_t h10 = vdupq_n_u8(0x10);
  return {vandq_u8(vtstq_u8(b01, bit), h10), vandq_u8(vtstq_u8(b23, bit), h10)};
}

// Loops over the blocks of one row: per block, Dot(w, x) (byte addresses of
// the weight and activation block, any alignment) returns the int32x4 partial
// sums of the block dot; they are scaled by d_w * d_x and accumulated in four
// F32 lanes. For the affine formats (kAffine) m_w * s_x is added per block.
template <typename WBlock, typename XBlock, bool kAffine, typename Dot>
float dot_rows_32(int64_t n, const void* w, const void* x, Dot dot) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  float32x4_t acc = vdupq_n_f32(0.0f);
  float sum_m = 0.0f;
  for (int64_t b = 0; b < n / 32; ++b, wb += sizeof(WBlock), xb += sizeof(XBlock)) {
    const int32x4_t d = dot(wb, reinterpret_cast<const int8_t*>(xb + offsetof(XBlock, qs)));
    const float scale = load_f16(wb + offsetof(WBlock, d)) * load_f16(xb + offsetof(XBlock, d));
    acc = vmlaq_n_f32(acc, vcvtq_f32_s32(d), scale);
    if constexpr (kAffine) sum_m += load_f16(wb + offsetof(WBlock, m)) * load_f16(xb + offsetof(XBlock, s));
  }
  return vaddvq_f32(acc) + sum_m;
}

}  // namespace

void LES_NEON_KERNEL(vec_dot_q4_0_q8_0)(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows_32<block_q4_0, block_q8_0, false>(n, w, x, [](const uint8_t* wb, const int8_t* y) {
    const int8x16_t eight = vdupq_n_s8(8);
    const uint8x16_t q = vld1q_u8(wb + offsetof(block_q4_0, qs));
    const int8x16_t w0 = vsubq_s8(as_s8(low_nibbles(q)), eight);   // elements 0..15
    const int8x16_t w1 = vsubq_s8(as_s8(high_nibbles(q)), eight);  // elements 16..31
    return dot_s8x2(w0, vld1q_s8(y), w1, vld1q_s8(y + 16));
  });
}

void LES_NEON_KERNEL(vec_dot_q5_0_q8_0)(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows_32<block_q5_0, block_q8_0, false>(n, w, x, [](const uint8_t* wb, const int8_t* y) {
    const int8x16_t sixteen = vdupq_n_s8(16);
    const uint8x16_t q = vld1q_u8(wb + offsetof(block_q5_0, qs));
    const FifthBits h = fifth_bits(wb + offsetof(block_q5_0, qh));
    const int8x16_t w0 = vsubq_s8(as_s8(vorrq_u8(low_nibbles(q), h.lo)), sixteen);
    const int8x16_t w1 = vsubq_s8(as_s8(vorrq_u8(high_nibbles(q), h.hi)), sixteen);
    return dot_s8x2(w0, vld1q_s8(y), w1, vld1q_s8(y + 16));
  });
}

void LES_NEON_KERNEL(vec_dot_q8_0_q8_0)(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows_32<block_q8_0, block_q8_0, false>(n, w, x, [](const uint8_t* wb, const int8_t* y) {
    const auto* q = reinterpret_cast<const int8_t*>(wb + offsetof(block_q8_0, qs));
    return dot_s8x2(vld1q_s8(q), vld1q_s8(y), vld1q_s8(q + 16), vld1q_s8(y + 16));
  });
}

void LES_NEON_KERNEL(vec_dot_iq4_nl_q8_0)(int64_t n, float* s, const void* w, const void* x) {
  const int8x16_t table = vld1q_s8(kIQ4NLValues);  // the non-linear codebook, indexed by the 4-bit code
  *s = dot_rows_32<block_iq4_nl, block_q8_0, false>(n, w, x, [table](const uint8_t* wb, const int8_t* y) {
    const uint8x16_t q = vld1q_u8(wb + offsetof(block_iq4_nl, qs));
    const int8x16_t w0 = vqtbl1q_s8(table, low_nibbles(q));
    const int8x16_t w1 = vqtbl1q_s8(table, high_nibbles(q));
    return dot_s8x2(w0, vld1q_s8(y), w1, vld1q_s8(y + 16));
  });
}

void LES_NEON_KERNEL(vec_dot_q4_1_q8_1)(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows_32<block_q4_1, block_q8_1, true>(n, w, x, [](const uint8_t* wb, const int8_t* y) {
    const uint8x16_t q = vld1q_u8(wb + offsetof(block_q4_1, qs));
    return dot_s8x2(as_s8(low_nibbles(q)), vld1q_s8(y), as_s8(high_nibbles(q)), vld1q_s8(y + 16));
  });
}

void LES_NEON_KERNEL(vec_dot_q5_1_q8_1)(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows_32<block_q5_1, block_q8_1, true>(n, w, x, [](const uint8_t* wb, const int8_t* y) {
    const uint8x16_t q = vld1q_u8(wb + offsetof(block_q5_1, qs));
    const FifthBits h = fifth_bits(wb + offsetof(block_q5_1, qh));
    return dot_s8x2(as_s8(vorrq_u8(low_nibbles(q), h.lo)), vld1q_s8(y), as_s8(vorrq_u8(high_nibbles(q), h.hi)),
                    vld1q_s8(y + 16));
  });
}

}  // namespace les::kernels
