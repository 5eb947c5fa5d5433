// Internal: small NEON building blocks shared by the arm/neon_*.cpp kernels.
//
// Everything here has internal linkage (anonymous namespace): the int8 kernels
// are compiled twice, for the armv8-a baseline and for +dotprod, and each
// translation unit must get its own copy of dot_s8 rather than whichever copy
// the linker would keep for an inline function with external linkage.
//
// Thread-safety: pure inline functions.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

namespace les::kernels::neon {
namespace {

// acc + products of int8 lanes a[i] * b[i], reduced into four int32 lanes.
// Which products land in which lane differs between the SDOT and the baseline
// path, so callers only rely on the sum over all four lanes (vaddvq_s32) or on
// lane-wise linear operations applied before that sum.
inline int32x4_t dot_s8(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(acc, a, b);
#else
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
  return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}

// Dot of two int8x16 pairs (32 products) into four int32 lanes.
inline int32x4_t dot_s8x2(int8x16_t a0, int8x16_t b0, int8x16_t a1, int8x16_t b1) {
  return dot_s8(dot_s8(vdupq_n_s32(0), a0, b0), a1, b1);
}

// Exact binary16 -> F32 by the FCVT instruction (same value as les::fp16_to_fp32).
inline float f16_to_f32(uint16_t h) {
  __fp16 v;
  std::memcpy(&v, &h, sizeof v);
  return static_cast<float>(v);
}

// F16 / F32 scalars at any address (block fields of possibly misaligned rows).
inline float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return f16_to_f32(h);
}
inline float load_f32(const uint8_t* p) {
  float f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

inline int8x16_t as_s8(uint8x16_t v) { return vreinterpretq_s8_u8(v); }

// Low and high nibbles of 16 packed bytes.
inline uint8x16_t low_nibbles(uint8x16_t v) { return vandq_u8(v, vdupq_n_u8(0x0F)); }
inline uint8x16_t high_nibbles(uint8x16_t v) { return vshrq_n_u8(v, 4); }

}  // namespace
}  // namespace les::kernels::neon
