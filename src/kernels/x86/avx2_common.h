// Internal helpers of the AVX2 kernel tier. Include only from src/kernels/x86/avx2*.cpp
// (compiled with -mavx2 -mfma -mf16c -mbmi2). Everything here has internal
// linkage (anonymous namespace), so the AVX-512 TUs can never pick up these
// definitions through ODR merging and vice versa.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/block_formats.h"

namespace les::kernels::avx2 {
namespace {

// Sum of the 8 lanes of a float vector.
inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Sum of the 8 lanes of an int32 vector.
inline int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// F16 -> F32 of one scale (F16C), identical to fp16_to_fp32 for every input.
inline float f16(fp16_t h) { return _cvtsh_ss(h); }

// Unsigned bytes (0..127 or 0..255 with care) times signed bytes, summed in
// adjacent groups of 4 into int32 lanes. maddubs saturates to int16 only when
// a pair exceeds 32767, which the callers rule out (u <= 63 with |s| <= 127 at most 2*63*127).
inline __m256i dot_u8s8_epi32(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// Signed bytes times signed bytes (neither -128), summed in groups of 4 into int32.
inline __m256i dot_s8s8_epi32(__m256i a, __m256i b) {
  return dot_u8s8_epi32(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

// 32 4-bit values packed like Q4_0 (16 bytes: element j low nibble, j+16 high
// nibble) expanded to 32 bytes in element order.
inline __m256i unpack_nibbles32(const uint8_t* qs) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(v, 4), v);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// 32 bits -> 32 bytes: byte j = 0xFF if bit j of `bits` is set, else 0.
inline __m256i bits_to_bytes(uint32_t bits) {
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303LL, 0x0202020202020202LL,
                                         0x0101010101010101LL, 0x0000000000000000LL);
  __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(bits)), shuf);
  const __m256i bitsel = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  v = _mm256_and_si256(v, bitsel);
  return _mm256_cmpeq_epi8(v, bitsel);
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline __m256i loadu(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// A 16-lane float accumulator of the OpKernels contracts (kernels.h) as a
// pair of ymm registers: lanes 0-7 and 8-15.
struct V16 {
  __m256 lo, hi;
};

inline V16 zero16() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
inline V16 add16(V16 a, V16 b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
inline V16 fma16(V16 a, V16 b, V16 c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }

// ops::reduce_add16's order: l[i] + l[i+8], then + [i+4], then (0+2) + (1+3).
inline float reduce16(V16 v) {
  const __m256 a = _mm256_add_ps(v.lo, v.hi);
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));  // b0+b2, b1+b3
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

}  // namespace
}  // namespace les::kernels::avx2
