// AVX2 activation quantisers Q8_0, Q8_1 and Q8_K: byte-identical to the
// scalar reference (ref.h / ref_quantize_act.cpp) for every input, NaN and
// inf included:
// * max|x| with vmaxps(|x|, acc) skips NaN exactly like std::max(acc, |x|);
// * scales are computed with the same scalar float divisions;
// * vcvtps2dq rounds half to even (default MXCSR) like nearbyint, and the
//   saturating packs clamp to [-128, 127] exactly as the reference's clamps
//   (NaN converts to INT_MIN and packs to -128, as the reference maps NaN);
// * Q8_K's signed max is the first element whose |x| equals max|x|.
#include <cmath>

#include "kernels/fp16.h"
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"

namespace les::kernels::avx2 {
namespace {

inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// max over |x[0..n)| (n a multiple of 8), NaN-skipping as the reference.
inline float abs_max(const float* x, int n) {
  __m256 m = _mm256_setzero_ps();
  for (int i = 0; i < n; i += 8) m = _mm256_max_ps(abs_ps(_mm256_loadu_ps(x + i)), m);
  __m128 h = _mm_max_ps(_mm256_extractf128_ps(m, 1), _mm256_castps256_ps128(m));
  h = _mm_max_ps(_mm_movehl_ps(h, h), h);
  h = _mm_max_ss(_mm_movehdup_ps(h), h);
  return _mm_cvtss_f32(h);
}

// Rounds x[0..32) * scale to int8 (half to even, saturating) and stores 32 bytes at q.
inline void round_store_32(const float* x, float scale, int8_t* q) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), s));
  const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), s));
  const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), s));
  const __m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), s));
  // packs work per 128-bit lane; the final permute restores element order.
  const __m256i ab = _mm256_packs_epi32(a, b);
  const __m256i cd = _mm256_packs_epi32(c, d);
  const __m256i abcd = _mm256_packs_epi16(ab, cd);
  const __m256i ordered = _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), ordered);
}

inline int sum_i8_32(const int8_t* q) {
  const __m256i v = loadu(q);
  const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), v);
  return hsum_epi32(_mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
}

}  // namespace

void quantize_row_q8_0(const float* x, void* vy, int64_t n) {
  block_q8_0* y = static_cast<block_q8_0*>(vy);
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* xb = x + 32 * b;
    const float amax = abs_max(xb, 32);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    round_store_32(xb, id, y[b].qs);
    y[b].d = fp32_to_fp16(d);
  }
}

void quantize_row_q8_1(const float* x, void* vy, int64_t n) {
  block_q8_1* y = static_cast<block_q8_1*>(vy);
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* xb = x + 32 * b;
    const float amax = abs_max(xb, 32);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    round_store_32(xb, id, y[b].qs);
    y[b].d = fp32_to_fp16(d);
    y[b].s = fp32_to_fp16(d * static_cast<float>(sum_i8_32(y[b].qs)));
  }
}

void quantize_row_q8_K(const float* x, void* vy, int64_t n) {
  block_q8_K* y = static_cast<block_q8_K*>(vy);
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* xb = x + kQKK * b;
    block_q8_K& out = y[b];
    const float amax = abs_max(xb, kQKK);
    if (amax == 0.0f) {
      out.d = 0.0f;
      std::memset(out.qs, 0, sizeof(out.qs));
      std::memset(out.bsums, 0, sizeof(out.bsums));
      continue;
    }
    // First element with |x| == amax (amax is one of the |x|, so one exists).
    const __m256 am = _mm256_set1_ps(amax);
    float max = 0.0f;
    for (int i = 0; i < kQKK; i += 8) {
      const int mask = _mm256_movemask_ps(_mm256_cmp_ps(abs_ps(_mm256_loadu_ps(xb + i)), am, _CMP_EQ_OQ));
      if (mask != 0) {
        max = xb[i + __builtin_ctz(static_cast<unsigned>(mask))];
        break;
      }
    }
    const float iscale = -127.0f / max;
    for (int i = 0; i < kQKK; i += 32) round_store_32(xb + i, iscale, out.qs + i);
    for (int j = 0; j < kQKK / 16; ++j) {
      // Sum of 16 int8: widen to int16 and reduce.
      const __m256i w = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(out.qs + 16 * j)));
      out.bsums[j] = static_cast<int16_t>(hsum_epi32(_mm256_madd_epi16(w, _mm256_set1_epi16(1))));
    }
    out.d = 1.0f / iscale;
  }
}

}  // namespace les::kernels::avx2
