// AVX2 dot products of the ternary formats TQ1_0 and TQ2_0 against Q8_K,
// bit-identical to the scalar references (ref_ternary.cpp): each super-block's
// isum = sum code * q8 is exact in int32 lanes, then the reference's float
// step acc += float(isum) * (dx * dw) runs on a scalar accumulator (this file
// is built with -ffp-contract=off).
//
// The codes are handled as unsigned digits u = code + 1 (0..2, TQ2_0 0..3),
// so maddubs(u, q8) applies (pairs <= 2 * 3 * 127); the offset comes back as
// isum = sum u * q8 - sum q8, the last from Q8_K's bsums.
// TQ1_0's base-3 digit n of a byte b is ((uint8_t)(b * 3^n) * 3) >> 8: the
// byte products wrap mod 256 exactly as 8-bit adds do (b * 3 = b + b + b),
// and (q * 3) >> 8 is 0, 1 or 2 as q < 86, 86 <= q < 171, q >= 171.
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"

namespace les::kernels::avx2 {
namespace {

// sum of Q8_K's 16 bsums: the sum of the block's 256 codes.
inline int32_t sum_q8(const block_q8_K& y) {
  return hsum_epi32(_mm256_madd_epi16(loadu(y.bsums), _mm256_set1_epi16(1)));
}

inline __m256i times3(__m256i q) { return _mm256_add_epi8(q, _mm256_add_epi8(q, q)); }
inline __m128i times3(__m128i q) { return _mm_add_epi8(q, _mm_add_epi8(q, q)); }

// ((q * 3) >> 8) per unsigned byte: -(q > 85) - (q > 170) by signed compares of q ^ 0x80.
inline __m256i digit(__m256i q) {
  const __m256i s = _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80)));
  const __m256i a = _mm256_cmpgt_epi8(s, _mm256_set1_epi8(85 - 128));
  const __m256i b = _mm256_cmpgt_epi8(s, _mm256_set1_epi8(170 - 128));
  return _mm256_sub_epi8(_mm256_setzero_si256(), _mm256_add_epi8(a, b));
}
inline __m128i digit(__m128i q) {
  const __m128i s = _mm_xor_si128(q, _mm_set1_epi8(static_cast<char>(0x80)));
  const __m128i a = _mm_cmpgt_epi8(s, _mm_set1_epi8(85 - 128));
  const __m128i b = _mm_cmpgt_epi8(s, _mm_set1_epi8(170 - 128));
  return _mm_sub_epi8(_mm_setzero_si128(), _mm_add_epi8(a, b));
}

inline __m256i dot_u(__m256i u, const int8_t* q8) { return dot_u8s8_epi32(u, loadu(q8)); }

// sum u * q8 over one TQ1_0 block (u = code + 1).
int32_t usum_tq1_0(const block_tq1_0& w, const block_q8_K& y) {
  // Elements 0..159: digit n of qs[0..31] meets q8[32 n ..].
  __m256i q = loadu(w.qs);
  __m256i acc = dot_u(digit(q), y.qs);
  for (int n = 1; n < 5; ++n) {
    q = times3(q);
    acc = _mm256_add_epi32(acc, dot_u(digit(q), y.qs + 32 * n));
  }
  // Elements 160..239: digit n of qs[32..47] meets q8[160 + 16 n ..], two digits per vector.
  const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs + 32));
  const __m128i x1 = times3(x0), x2 = times3(x1), x3 = times3(x2), x4 = times3(x3);
  acc = _mm256_add_epi32(acc, dot_u(digit(_mm256_set_m128i(x1, x0)), y.qs + 160));
  acc = _mm256_add_epi32(acc, dot_u(digit(_mm256_set_m128i(x3, x2)), y.qs + 192));
  const __m128i p4 = _mm_maddubs_epi16(digit(x4), _mm_loadu_si128(reinterpret_cast<const __m128i*>(y.qs + 224)));
  // Elements 240..255: digit n of qh[j] meets q8[240 + 4 n + j]: dwords qh, qh*3, qh*9, qh*27.
  const __m128i h0 = _mm_set1_epi32(static_cast<int32_t>(load_u32(w.qh)));
  const __m128i h1 = times3(h0), h2 = times3(h1), h3 = times3(h2);
  const __m128i h = _mm_unpacklo_epi64(_mm_unpacklo_epi32(h0, h1), _mm_unpacklo_epi32(h2, h3));
  const __m128i ph = _mm_maddubs_epi16(digit(h), _mm_loadu_si128(reinterpret_cast<const __m128i*>(y.qs + 240)));
  const __m128i tail = _mm_madd_epi16(_mm_add_epi16(p4, ph), _mm_set1_epi16(1));  // int16 sums <= 4 * 2 * 127
  return hsum_epi32(_mm256_add_epi32(acc, _mm256_inserti128_si256(_mm256_setzero_si256(), tail, 0)));
}

// sum u * q8 over one TQ2_0 block (u = code + 1): bits 2l of qs[32 c + m] meet q8[128 c + 32 l + m].
int32_t usum_tq2_0(const block_tq2_0& w, const block_q8_K& y) {
  const __m256i low2 = _mm256_set1_epi8(3);
  __m256i acc = _mm256_setzero_si256();
  for (int c = 0; c < 2; ++c) {
    const __m256i q = loadu(w.qs + 32 * c);
    for (int l = 0; l < 4; ++l)
      acc = _mm256_add_epi32(acc, dot_u(_mm256_and_si256(_mm256_srli_epi16(q, 2 * l), low2), y.qs + 128 * c + 32 * l));
  }
  return hsum_epi32(acc);
}

template <typename Block, int32_t (*USum)(const Block&, const block_q8_K&)>
float dot_ternary(int64_t n, const void* vw, const void* vx) {
  const Block* w = static_cast<const Block*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const int32_t isum = USum(w[b], x[b]) - sum_q8(x[b]);
    const float d = x[b].d * f16(w[b].d);
    const float term = static_cast<float>(isum) * d;
    acc += term;
  }
  return acc;
}

}  // namespace

void vec_dot_tq1_0_q8_K(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_ternary<block_tq1_0, usum_tq1_0>(n, w, x);
}

void vec_dot_tq2_0_q8_K(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_ternary<block_tq2_0, usum_tq2_0>(n, w, x);
}

}  // namespace les::kernels::avx2
