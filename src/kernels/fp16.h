// IEEE 754 binary16 (F16) and bfloat16 (BF16) conversion, scalar reference.
//
// F16 <-> F32: exact widening; narrowing rounds to nearest, ties to even, with
// overflow to inf and subnormal support, the same results as the F16C
// instruction VCVTPS2PH with rounding mode 0 (what ggml uses on x86).
// BF16: the upper 16 bits of an F32; narrowing rounds to nearest even and keeps
// NaN quiet (ggml's ggml_compute_fp32_to_bf16).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>

namespace les {

using fp16_t = uint16_t;  // raw bits of an IEEE binary16
using bf16_t = uint16_t;  // raw bits of a bfloat16

inline float fp32_from_bits(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}
inline uint32_t fp32_to_bits(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

// Exact conversion of binary16 bits to float (handles subnormals, inf, NaN).
inline float fp16_to_fp32(fp16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return fp32_from_bits(sign | 0x7F800000u | (mant << 13));  // inf / NaN
  if (exp == 0) {
    if (mant == 0) return fp32_from_bits(sign);
    // subnormal: value = mant * 2^-24
    float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return fp32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Float to binary16 bits, round to nearest even.
inline fp16_t fp32_to_fp16(float f) {
  uint32_t x = fp32_to_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7FFFFFFFu;
  if (x > 0x7F800000u) return static_cast<fp16_t>(sign | 0x7E00u | ((x >> 13) & 0x3FFu));  // NaN
  if (x >= 0x477FF000u) return static_cast<fp16_t>(sign | 0x7C00u);  // rounds to >= 65520 -> inf
  if (x < 0x38800000u) {
    // result is subnormal or zero: value / 2^-24, rounded to nearest even
    if (x < 0x33000000u) return static_cast<fp16_t>(sign);  // < 2^-25: rounds to 0
    const uint32_t e = x >> 23;
    const uint32_t m = (x & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14..24 (e in 102..112)
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<fp16_t>(sign | r);
  }
  // normal: rebias exponent 127 -> 15 and round mantissa 23 -> 10 bits
  uint32_t r = x - 0x38000000u;  // subtract (112 << 23)
  const uint32_t rem = r & 0x1FFFu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<fp16_t>(sign | r);
}

inline float bf16_to_fp32(bf16_t h) { return fp32_from_bits(static_cast<uint32_t>(h) << 16); }

inline bf16_t fp32_to_bf16(float f) {
  uint32_t x = fp32_to_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<bf16_t>((x >> 16) | 64u);  // quiet NaN
  return static_cast<bf16_t>((x + (0x7FFFu + ((x >> 16) & 1u))) >> 16);
}

}  // namespace les
