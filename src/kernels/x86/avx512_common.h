// Internal helpers of the AVX-512 kernel tier. Include only from
// src/kernels/x86/avx512*.cpp (compiled with the AVX-512 flags). Internal
// linkage (anonymous namespace), so no other TU can pick these up.
#pragma once

// GCC 12's AVX-512 intrinsics (cvtph_ps, inserti64x4, cvtepi32_ps, ...) use
// _mm512_undefined_*() internally and trip -Wuninitialized at every inlining
// site (GCC bug 105593, fixed in GCC 13); the warning is false, so silence it here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/block_formats.h"

namespace les::kernels::avx512 {
namespace {

// ops::reduce_add16's order: l[i] + l[i+8], then + [i+4], then (0+2) + (1+3).
inline float reduce16(__m512 v) {
  const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));  // b0+b2, b1+b3
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

inline float f16(fp16_t h) { return _cvtsh_ss(h); }
inline __m512i loadu512(const void* p) { return _mm512_loadu_si512(p); }
inline __m256i loadu256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m512i bcast256(const void* p) { return _mm512_broadcast_i64x4(loadu256(p)); }

// int16 vector: `lo` in lanes 0..15, `hi` in lanes 16..31.
inline __m512i halves_epi16(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(lo)), _mm256_set1_epi16(static_cast<int16_t>(hi)), 1);
}

// Index vectors for vpermw: lane i of kQuadIndex[q] is 4 q + i / 8 (four
// 16-element sub-blocks = four groups of 8 int16 pair-sums). Constant data
// (no dynamic initialisation).
struct alignas(64) QuadIndexTable {
  int16_t v[4][32];
};
constexpr QuadIndexTable make_quad_index() {
  QuadIndexTable t{};
  for (int q = 0; q < 4; ++q)
    for (int i = 0; i < 32; ++i) t.v[q][i] = static_cast<int16_t>(4 * q + i / 8);
  return t;
}
constexpr QuadIndexTable kQuadIndex = make_quad_index();
inline __m512i quad_index(int base) { return _mm512_load_si512(kQuadIndex.v[base / 4]); }

// Q3_K's vpermw index (avx512_kquants.cpp): chunk c = 2 h + pr of a super-block
// covers sub-blocks 4 c .. 4 c + 3; int16 lane i < 16 takes scale 4 c + i / 8
// from lanes 0..15 of the scale vector, lane i >= 16 scale 4 c + i / 8 from
// lanes 16..31 (the same 16 scales stored a second time).
struct alignas(64) Q3IndexTable {
  int16_t v[4][32];
};
constexpr Q3IndexTable make_q3_index() {
  Q3IndexTable t{};
  for (int c = 0; c < 4; ++c)
    for (int i = 0; i < 32; ++i) t.v[c][i] = static_cast<int16_t>(4 * c + i / 8 + (i < 16 ? 0 : 16));
  return t;
}
constexpr Q3IndexTable kQ3Index = make_q3_index();
inline __m512i q3_index(int c) { return _mm512_load_si512(kQ3Index.v[c]); }

// int8 vector: `lo` in bytes 0..31, `hi` in bytes 32..63.
inline __m512i halves_epi8(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(lo)), _mm256_set1_epi8(static_cast<char>(hi)), 1);
}

// Pair index: lanes 0..15 take element base, lanes 16..31 element base + 1.
inline __m512i pair_index(int base) { return halves_epi16(base, base + 1); }

inline float hsum256_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Two 32-byte runs (at p and q) in one 512-bit vector.
inline __m512i load2x256(const void* p, const void* q) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(loadu256(p)), loadu256(q), 1);
}

// Scale vector: d0 in lanes 0..7, d1 in lanes 8..15.
inline __m512 halves_ps(float d0, float d1) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(d0)), _mm256_set1_ps(d1), 1);
}

// Q4_0 codes of one block as unsigned nibbles (0..15) in element order.
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0F));
}

// Block b of activation row t (rows x_stride bytes apart), for the
// vec_dot_multi kernels.
template <class Block>
inline const Block& xblock(const void* x, size_t x_stride, int t, int64_t b) {
  return reinterpret_cast<const Block*>(static_cast<const uint8_t*>(x) + static_cast<size_t>(t) * x_stride)[b];
}

// One VecDotMultiFn over a kernel template K<NX>::run (NX rows at once, NX = 1
// being the vec_dot): nx in 1..kVecDotMultiMax.
template <template <int> class K>
void dot_multi(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride, int nx) {
  switch (nx) {
    case 1: K<1>::run(n, s, s_stride, w, x, x_stride); break;
    case 2: K<2>::run(n, s, s_stride, w, x, x_stride); break;
    case 3: K<3>::run(n, s, s_stride, w, x, x_stride); break;
    default: K<4>::run(n, s, s_stride, w, x, x_stride); break;
  }
}

}  // namespace
}  // namespace les::kernels::avx512
