// Internal helpers of the AVX-512 kernel tier. Include only from
// src/kernels/x86/avx512*.cpp (compiled with the AVX-512 flags). Internal
// linkage (anonymous namespace), so no other TU can pick these up.
#pragma once

#include <immintrin.h>

namespace les::kernels::avx512 {
namespace {

// ops::reduce_add16's order: l[i] + l[i+8], then + [i+4], then (0+2) + (1+3).
inline float reduce16(__m512 v) {
  const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));  // b0+b2, b1+b3
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

}  // namespace
}  // namespace les::kernels::avx512
