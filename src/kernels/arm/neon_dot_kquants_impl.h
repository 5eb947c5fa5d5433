// NEON dot products of the K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K) with Q8_K
// activations, one 256-element super-block at a time.
//
// Per super-block the weight codes of each sub-block are dotted exactly (int32)
// with the Q8_K quants, weighted by the integer sub-block scale and summed
// (isum); formats with a min (Q2_K, Q4_K, Q5_K) also form msum = sum_j m_j *
// (Q8_K bsums of sub-block j). These integer sums equal the reference's
// block_sums_*_ref (ref.h) bit for bit; the float part follows the reference's
// order, so whole dot products match it exactly. Source: block_formats.h.
//
// Layouts used below (element e of a super-block, as in ggml's dequantisers):
//   Q2_K: e = 128h + 32j + l: q = (qs[32h + l] >> 2j) & 3, scale/min byte e/16.
//   Q3_K: as Q2_K plus high bit (hmask[l] >> (4h + j)) & 1, q - 4 when it is 0.
//   Q4_K: e = 64c + l (l < 32): low nibble of qs[32c + l]; e = 64c + 32 + l: high nibble.
//   Q5_K: as Q4_K plus fifth bit (qh[l] >> 2c) & 1, resp. (qh[l] >> (2c + 1)) & 1.
//   Q6_K: e = 128h + l, +32, +64, +96 (l < 32): low/high nibbles of ql[64h + l],
//         ql[64h + 32 + l] with bit pairs 0-1, 2-3, 4-5, 6-7 of qh[32h + l]; scale e/16.
//
// Internal: included once per instruction-set variant by a .cpp that defines
// LES_NEON_KERNEL(name) to give the exported functions that variant's suffix
// (neon_dot_int8.cpp: _neon, neon_dotprod.cpp: _neon_dotprod); no include guard on purpose.
#include <arm_neon.h>

#include <cstddef>
#include <cstring>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/block_formats.h"

namespace les::kernels {
namespace {

using neon::as_s8;
using neon::dot_s8;
using neon::dot_s8x2;
using neon::load_f16;
using neon::load_f32;
using neon::high_nibbles;
using neon::low_nibbles;

// Unpacks the 12-byte scale field of Q4_K/Q5_K into eight 6-bit scales and mins.
// Sub-block j < 4: scale = s[j] & 63, min = s[j + 4] & 63. j >= 4: the low 4 bits
// come from s[j + 4] (scale: low nibble, min: high nibble) and the top 2 bits
// from bits 6-7 of s[j - 4] (scale) resp. s[j] (min).
inline void unpack_scales_mins_k4(const uint8_t s[kKScaleSize], uint8_t scale[8], uint8_t min[8]) {
  for (int j = 0; j < 4; ++j) {
    scale[j] = s[j] & 63;
    min[j] = s[j + 4] & 63;
    scale[j + 4] = static_cast<uint8_t>((s[j + 8] & 0x0F) | ((s[j] >> 6) << 4));
    min[j + 4] = static_cast<uint8_t>((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
  }
}

// Unpacks the 12-byte scale field of Q3_K into sixteen signed scales (6 bits, minus 32).
// Scale j: low 4 bits = low nibble of s[j] (j < 8) or high nibble of s[j - 8];
// top 2 bits = bits 2(j / 4) .. 2(j / 4) + 1 of s[8 + j % 4].
inline void unpack_scales_q3_K(const uint8_t s[12], int8_t scale[16]) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? (s[j] & 0x0F) : (s[j - 8] >> 4);
    const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    scale[j] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

// 8 int16 at any address.
inline int16x8_t load_s16x8(const uint8_t* p) { return vreinterpretq_s16_u8(vld1q_u8(p)); }

// sum_j min[j] * (bsums[2j] + bsums[2j + 1]) for the eight 32-element sub-blocks.
inline int32_t min_correction_32(const uint8_t* bsums, const uint8_t min[8]) {
  const int16x8_t sums = vpaddq_s16(load_s16x8(bsums), load_s16x8(bsums + 16));
  const int16x8_t m = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(min)));
  int32x4_t p = vmull_s16(vget_low_s16(sums), vget_low_s16(m));
  p = vmlal_high_s16(p, sums, m);
  return vaddvq_s32(p);
}

// sum_g min[g] * bsums[g] (bsums: the Q8_K field's bytes) for the sixteen 16-element sub-blocks.
inline int32_t min_correction_16(const uint8_t* bsums, uint8x16_t min) {
  const int16x8_t m0 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(min)));
  const int16x8_t m1 = vreinterpretq_s16_u16(vmovl_high_u8(min));
  const int16x8_t b0 = load_s16x8(bsums);
  const int16x8_t b1 = load_s16x8(bsums + 16);
  int32x4_t p = vmull_s16(vget_low_s16(b0), vget_low_s16(m0));
  p = vmlal_high_s16(p, b0, m0);
  p = vmlal_s16(p, vget_low_s16(b1), vget_low_s16(m1));
  p = vmlal_high_s16(p, b1, m1);
  return vaddvq_s32(p);
}

}  // namespace

namespace {

// Q2_K block at byte address w against the Q8_K block at x (any alignment).
KQuantBlockSums sums_q2_K(const uint8_t* w, const uint8_t* x) {
  const int8_t* x_qs = reinterpret_cast<const int8_t*>(x + offsetof(block_q8_K, qs));
  const uint8x16_t three = vdupq_n_u8(3);
  const uint8x16_t sc = vld1q_u8(w + offsetof(block_q2_K, scales));
  uint8_t scale[16];
  vst1q_u8(scale, low_nibbles(sc));
  int32x4_t acc = vdupq_n_s32(0);
  const int8_t* y = x_qs;
  for (int h = 0; h < 2; ++h) {
    uint8x16_t q0 = vld1q_u8((w + offsetof(block_q2_K, qs)) + 32 * h);
    uint8x16_t q1 = vld1q_u8((w + offsetof(block_q2_K, qs)) + 32 * h + 16);
    for (int j = 0; j < 4; ++j, y += 32) {
      const int g = 8 * h + 2 * j;  // 16-element sub-blocks g and g + 1
      acc = vmlaq_n_s32(acc, dot_s8(vdupq_n_s32(0), as_s8(vandq_u8(q0, three)), vld1q_s8(y)), scale[g]);
      acc = vmlaq_n_s32(acc, dot_s8(vdupq_n_s32(0), as_s8(vandq_u8(q1, three)), vld1q_s8(y + 16)), scale[g + 1]);
      q0 = vshrq_n_u8(q0, 2);
      q1 = vshrq_n_u8(q1, 2);
    }
  }
  return {vaddvq_s32(acc), min_correction_16((x + offsetof(block_q8_K, bsums)), high_nibbles(sc))};
}

}  // namespace

KQuantBlockSums LES_NEON_KERNEL(block_sums_q2_K_q8_K)(const block_q2_K& w, const block_q8_K& x) {
  return sums_q2_K(reinterpret_cast<const uint8_t*>(&w), reinterpret_cast<const uint8_t*>(&x));
}

namespace {

// Q3_K block at byte address w against the Q8_K block at x (any alignment).
KQuantBlockSums sums_q3_K(const uint8_t* w, const uint8_t* x) {
  const int8_t* x_qs = reinterpret_cast<const int8_t*>(x + offsetof(block_q8_K, qs));
  const uint8x16_t three = vdupq_n_u8(3);
  const uint8x16_t four = vdupq_n_u8(4);
  const int8x16_t four_s = vdupq_n_s8(4);
  int8_t scale[16];
  unpack_scales_q3_K((w + offsetof(block_q3_K, scales)), scale);
  const uint8x16_t hm0 = vld1q_u8(w + offsetof(block_q3_K, hmask));
  const uint8x16_t hm1 = vld1q_u8((w + offsetof(block_q3_K, hmask)) + 16);
  int32x4_t acc = vdupq_n_s32(0);
  const int8_t* y = x_qs;
  for (int h = 0; h < 2; ++h) {
    uint8x16_t q0 = vld1q_u8((w + offsetof(block_q3_K, qs)) + 32 * h);
    uint8x16_t q1 = vld1q_u8((w + offsetof(block_q3_K, qs)) + 32 * h + 16);
    for (int j = 0; j < 4; ++j, y += 32) {
      const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1u << (4 * h + j)));
      // (2 low bits | 4 * high bit) - 4: the signed 3-bit code.
      const uint8x16_t u0 = vorrq_u8(vandq_u8(q0, three), vandq_u8(vtstq_u8(hm0, bit), four));
      const uint8x16_t u1 = vorrq_u8(vandq_u8(q1, three), vandq_u8(vtstq_u8(hm1, bit), four));
      const int g = 8 * h + 2 * j;
      acc = vmlaq_n_s32(acc, dot_s8(vdupq_n_s32(0), vsubq_s8(as_s8(u0), four_s), vld1q_s8(y)), scale[g]);
      acc = vmlaq_n_s32(acc, dot_s8(vdupq_n_s32(0), vsubq_s8(as_s8(u1), four_s), vld1q_s8(y + 16)), scale[g + 1]);
      q0 = vshrq_n_u8(q0, 2);
      q1 = vshrq_n_u8(q1, 2);
    }
  }
  return {vaddvq_s32(acc), 0};
}

}  // namespace

KQuantBlockSums LES_NEON_KERNEL(block_sums_q3_K_q8_K)(const block_q3_K& w, const block_q8_K& x) {
  return sums_q3_K(reinterpret_cast<const uint8_t*>(&w), reinterpret_cast<const uint8_t*>(&x));
}

namespace {

// Q4_K block at byte address w against the Q8_K block at x (any alignment).
KQuantBlockSums sums_q4_K(const uint8_t* w, const uint8_t* x) {
  const int8_t* x_qs = reinterpret_cast<const int8_t*>(x + offsetof(block_q8_K, qs));
  uint8_t scale[8], min[8];
  unpack_scales_mins_k4((w + offsetof(block_q4_K, scales)), scale, min);
  int32x4_t acc = vdupq_n_s32(0);
  const uint8_t* q = w + offsetof(block_q4_K, qs);
  const int8_t* y = x_qs;
  for (int c = 0; c < 4; ++c, q += 32, y += 64) {
    const uint8x16_t q0 = vld1q_u8(q);
    const uint8x16_t q1 = vld1q_u8(q + 16);
    const int32x4_t lo = dot_s8x2(as_s8(low_nibbles(q0)), vld1q_s8(y), as_s8(low_nibbles(q1)), vld1q_s8(y + 16));
    const int32x4_t hi =
        dot_s8x2(as_s8(high_nibbles(q0)), vld1q_s8(y + 32), as_s8(high_nibbles(q1)), vld1q_s8(y + 48));
    acc = vmlaq_n_s32(acc, lo, scale[2 * c]);
    acc = vmlaq_n_s32(acc, hi, scale[2 * c + 1]);
  }
  return {vaddvq_s32(acc), min_correction_32((x + offsetof(block_q8_K, bsums)), min)};
}

}  // namespace

KQuantBlockSums LES_NEON_KERNEL(block_sums_q4_K_q8_K)(const block_q4_K& w, const block_q8_K& x) {
  return sums_q4_K(reinterpret_cast<const uint8_t*>(&w), reinterpret_cast<const uint8_t*>(&x));
}

namespace {

// Q5_K block at byte address w against the Q8_K block at x (any alignment).
KQuantBlockSums sums_q5_K(const uint8_t* w, const uint8_t* x) {
  const int8_t* x_qs = reinterpret_cast<const int8_t*>(x + offsetof(block_q8_K, qs));
  const uint8x16_t bit4 = vdupq_n_u8(0x10);
  uint8_t scale[8], min[8];
  unpack_scales_mins_k4((w + offsetof(block_q5_K, scales)), scale, min);
  uint8x16_t h0 = vld1q_u8(w + offsetof(block_q5_K, qh));
  uint8x16_t h1 = vld1q_u8((w + offsetof(block_q5_K, qh)) + 16);
  int32x4_t acc = vdupq_n_s32(0);
  const uint8_t* q = w + offsetof(block_q5_K, qs);
  const int8_t* y = x_qs;
  for (int c = 0; c < 4; ++c, q += 32, y += 64) {
    const uint8x16_t q0 = vld1q_u8(q);
    const uint8x16_t q1 = vld1q_u8(q + 16);
    // Bit 0 of h (sub-block 2c) resp. bit 1 (sub-block 2c + 1) moved to bit 4.
    const uint8x16_t lo0 = vorrq_u8(low_nibbles(q0), vandq_u8(vshlq_n_u8(h0, 4), bit4));
    const uint8x16_t lo1 = vorrq_u8(low_nibbles(q1), vandq_u8(vshlq_n_u8(h1, 4), bit4));
    const uint8x16_t hi0 = vorrq_u8(high_nibbles(q0), vandq_u8(vshlq_n_u8(h0, 3), bit4));
    const uint8x16_t hi1 = vorrq_u8(high_nibbles(q1), vandq_u8(vshlq_n_u8(h1, 3), bit4));
    const int32x4_t lo = dot_s8x2(as_s8(lo0), vld1q_s8(y), as_s8(lo1), vld1q_s8(y + 16));
    const int32x4_t hi = dot_s8x2(as_s8(hi0), vld1q_s8(y + 32), as_s8(hi1), vld1q_s8(y + 48));
    acc = vmlaq_n_s32(acc, lo, scale[2 * c]);
    acc = vmlaq_n_s32(acc, hi, scale[2 * c + 1]);
    h0 = vshrq_n_u8(h0, 2);
    h1 = vshrq_n_u8(h1, 2);
  }
  return {vaddvq_s32(acc), min_correction_32((x + offsetof(block_q8_K, bsums)), min)};
}

}  // namespace

KQuantBlockSums LES_NEON_KERNEL(block_sums_q5_K_q8_K)(const block_q5_K& w, const block_q8_K& x) {
  return sums_q5_K(reinterpret_cast<const uint8_t*>(&w), reinterpret_cast<const uint8_t*>(&x));
}

namespace {

// Q6_K block at byte address w against the Q8_K block at x (any alignment).
KQuantBlockSums sums_q6_K(const uint8_t* w, const uint8_t* x) {
  const int8_t* x_qs = reinterpret_cast<const int8_t*>(x + offsetof(block_q8_K, qs));
  const uint8x16_t bits45 = vdupq_n_u8(0x30);
  const int8x16_t offset = vdupq_n_s8(32);
  int32x4_t acc = vdupq_n_s32(0);
  const uint8_t* ql = w + offsetof(block_q6_K, ql);
  const uint8_t* qh = w + offsetof(block_q6_K, qh);
  const auto* sc = reinterpret_cast<const int8_t*>(w + offsetof(block_q6_K, scales));
  const int8_t* y = x_qs;
  for (int h = 0; h < 2; ++h, ql += 64, qh += 32, sc += 8, y += 128) {
    const uint8x16_t l0 = vld1q_u8(ql);
    const uint8x16_t l1 = vld1q_u8(ql + 16);
    const uint8x16_t l2 = vld1q_u8(ql + 32);
    const uint8x16_t l3 = vld1q_u8(ql + 48);
    const uint8x16_t h0 = vld1q_u8(qh);
    const uint8x16_t h1 = vld1q_u8(qh + 16);
    // The 6-bit codes (+32) of the eight 16-element sub-blocks of this half, in element order.
    const uint8x16_t u[8] = {
        vorrq_u8(low_nibbles(l0), vandq_u8(vshlq_n_u8(h0, 4), bits45)),
        vorrq_u8(low_nibbles(l1), vandq_u8(vshlq_n_u8(h1, 4), bits45)),
        vorrq_u8(low_nibbles(l2), vandq_u8(vshlq_n_u8(h0, 2), bits45)),
        vorrq_u8(low_nibbles(l3), vandq_u8(vshlq_n_u8(h1, 2), bits45)),
        vorrq_u8(high_nibbles(l0), vandq_u8(h0, bits45)),
        vorrq_u8(high_nibbles(l1), vandq_u8(h1, bits45)),
        vorrq_u8(high_nibbles(l2), vandq_u8(vshrq_n_u8(h0, 2), bits45)),
        vorrq_u8(high_nibbles(l3), vandq_u8(vshrq_n_u8(h1, 2), bits45)),
    };
    for (int g = 0; g < 8; ++g) {
      const int8x16_t q = vsubq_s8(as_s8(u[g]), offset);
      acc = vmlaq_n_s32(acc, dot_s8(vdupq_n_s32(0), q, vld1q_s8(y + 16 * g)), sc[g]);
    }
  }
  return {vaddvq_s32(acc), 0};
}

}  // namespace

KQuantBlockSums LES_NEON_KERNEL(block_sums_q6_K_q8_K)(const block_q6_K& w, const block_q8_K& x) {
  return sums_q6_K(reinterpret_cast<const uint8_t*>(&w), reinterpret_cast<const uint8_t*>(&x));
}

namespace {

// The float part, in the reference's order and rounding (ref.h): per block,
// acc += float(isum) * (dx * dw), then for formats with a min
// acc -= float(msum) * (dx * dmin). Identical integer sums therefore give
// identical results.
template <typename Block, bool kHasMin, KQuantBlockSums (*Sums)(const uint8_t*, const uint8_t*)>
void vec_dot_k(int64_t n, float* s, const void* w, const void* x) {
  // Byte addresses: rows may start at any address (ref.h asks for the blocks'
  // alignment, but the SIMD tiers accept less).
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b, wb += sizeof(Block), xb += sizeof(block_q8_K)) {
    const KQuantBlockSums sums = Sums(wb, xb);
    const float dx = load_f32(xb + offsetof(block_q8_K, d));
    acc += static_cast<float>(sums.isum) * (dx * load_f16(wb + offsetof(Block, d)));
    if constexpr (kHasMin) acc -= static_cast<float>(sums.msum) * (dx * load_f16(wb + offsetof(Block, dmin)));
  }
  *s = acc;
}

}  // namespace

void LES_NEON_KERNEL(vec_dot_q2_K_q8_K)(int64_t n, float* s, const void* w, const void* x) {
  vec_dot_k<block_q2_K, true, sums_q2_K>(n, s, w, x);
}
void LES_NEON_KERNEL(vec_dot_q3_K_q8_K)(int64_t n, float* s, const void* w, const void* x) {
  vec_dot_k<block_q3_K, false, sums_q3_K>(n, s, w, x);
}
void LES_NEON_KERNEL(vec_dot_q4_K_q8_K)(int64_t n, float* s, const void* w, const void* x) {
  vec_dot_k<block_q4_K, true, sums_q4_K>(n, s, w, x);
}
void LES_NEON_KERNEL(vec_dot_q5_K_q8_K)(int64_t n, float* s, const void* w, const void* x) {
  vec_dot_k<block_q5_K, true, sums_q5_K>(n, s, w, x);
}
void LES_NEON_KERNEL(vec_dot_q6_K_q8_K)(int64_t n, float* s, const void* w, const void* x) {
  vec_dot_k<block_q6_K, false, sums_q6_K>(n, s, w, x);
}

}  // namespace les::kernels
