// AVX2 dot products of the K-quants against Q8_K.
//
// Method (own formulation of the ref.h definitions): every K-quant code is
// handled as an *unsigned* byte u (Q4_K nibble, Q5_K 5-bit value, Q3_K
// low2 + 4 * hbit, Q6_K 6-bit value, Q2_K 2-bit value) so that maddubs
// (u8 x s8 -> pairs of int16) applies directly; the offsets of the signed
// formats are folded back with Q8_K's bsums:
//   Q3_K: code = u - 4   ->  isum = sum_j sc_j * (sum u*q8) - 4 * sum_j sc_j * bsum_j
//   Q6_K: code = u - 32  ->  isum = sum_j sc_j * (sum u*q8) - 32 * sum_j sc_j * bsum_j
// Both parts are exact int32, so the block's isum/msum equal the reference's.
// int16 bounds: a maddubs pair is at most 2 * 63 * 128 = 16128 (Q6_K), and
// scale * pair fits int32 trivially.
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"
#include "kernels/x86/kquant_scales.h"

namespace les::kernels::avx2 {
namespace {

// pshufb index that spreads int8 scale i over bytes 0..7 and scale i + 1 over
// bytes 8..15 (sign-extended afterwards: lanes 0..7 / 8..15 of an int16 vector,
// the two 16-element sub-blocks of one 32-byte chunk).
inline __m128i pair_index(int i) {
  return _mm_set_epi64x(0x0101010101010101LL * (i + 1), 0x0101010101010101LL * i);
}

// int16 vector: scale i of the 16 int8 scales in S in lanes 0..7, scale i + 1 in lanes 8..15.
inline __m256i scale_pair(__m128i S, __m128i index) { return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(S, index)); }

// pshufb index broadcasting int16 word k of a 128-bit lane to all 8 words.
inline __m256i word_index(int k) { return _mm256_set1_epi16(static_cast<int16_t>((2 * k) | ((2 * k + 1) << 8))); }

// msum of Q4_K/Q5_K: sum_j m_j * (bsums[2j] + bsums[2j+1]), as 8 int32 lanes.
inline __m256i k4_min_sums(const block_q8_K& y, uint64_t m64) {
  const __m256i mins = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(m64)));  // 8 x int32: m_j
  const __m256i mins_pairs = _mm256_or_si256(mins, _mm256_slli_epi32(mins, 16));     // int16 pairs (m_j, m_j)
  return _mm256_madd_epi16(loadu(y.bsums), mins_pairs);
}

}  // namespace

void vec_dot_q4_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q4_K* w = static_cast<const block_q4_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256i widx[8];
  for (int k = 0; k < 8; ++k) widx[k] = word_index(k);
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint64_t sc64, m64;
    x86::k4_scales_mins(w[b].scales, sc64, m64);
    const __m256i msum = k4_min_sums(x[b], m64);
    // The 8 scales as int16 words, in both 128-bit lanes.
    const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc64))));
    __m256i isum = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i q = loadu(w[b].qs + 32 * j);
      const __m256i lo = _mm256_and_si256(q, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      const __m256i plo = _mm256_maddubs_epi16(lo, loadu(x[b].qs + 64 * j));
      const __m256i phi = _mm256_maddubs_epi16(hi, loadu(x[b].qs + 64 * j + 32));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(plo, _mm256_shuffle_epi8(sc16, widx[2 * j])));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(phi, _mm256_shuffle_epi8(sc16, widx[2 * j + 1])));
    }
    const float d = x[b].d * f16(w[b].d);
    const float dmin = x[b].d * f16(w[b].dmin);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc);
    acc_m = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(msum), acc_m);
  }
  *s = hsum_ps(acc) - hsum_ps(acc_m);
}

void vec_dot_q5_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q5_K* w = static_cast<const block_q5_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256i widx[8];
  for (int k = 0; k < 8; ++k) widx[k] = word_index(k);
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint64_t sc64, m64;
    x86::k4_scales_mins(w[b].scales, sc64, m64);
    const __m256i msum = k4_min_sums(x[b], m64);
    // The 8 scales as int16 words, in both 128-bit lanes.
    const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc64))));
    const __m256i qh = loadu(w[b].qh);
    __m256i isum = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i q = loadu(w[b].qs + 32 * j);
      const __m256i hb_lo = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one);
      const __m256i hb_hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one);
      const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, low4), _mm256_slli_epi16(hb_lo, 4));
      const __m256i hi =
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), _mm256_slli_epi16(hb_hi, 4));
      const __m256i plo = _mm256_maddubs_epi16(lo, loadu(x[b].qs + 64 * j));
      const __m256i phi = _mm256_maddubs_epi16(hi, loadu(x[b].qs + 64 * j + 32));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(plo, _mm256_shuffle_epi8(sc16, widx[2 * j])));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(phi, _mm256_shuffle_epi8(sc16, widx[2 * j + 1])));
    }
    const float d = x[b].d * f16(w[b].d);
    const float dmin = x[b].d * f16(w[b].dmin);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc);
    acc_m = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(msum), acc_m);
  }
  *s = hsum_ps(acc) - hsum_ps(acc_m);
}

void vec_dot_q2_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q2_K* w = static_cast<const block_q2_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m256i low2 = _mm256_set1_epi8(3);
  __m128i pidx[8];
  for (int k = 0; k < 8; ++k) pidx[k] = pair_index(2 * k);
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const __m128i sm = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales));
    const __m128i S = _mm_and_si128(sm, _mm_set1_epi8(0x0F));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(0x0F)));
    const __m256i msum = _mm256_madd_epi16(loadu(x[b].bsums), mins);
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q = loadu(w[b].qs + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const __m256i u = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), low2);
        const __m256i p = _mm256_maddubs_epi16(u, loadu(x[b].qs + 128 * h + 32 * j));
        const int i = 8 * h + 2 * j;
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale_pair(S, pidx[i / 2])));
      }
    }
    const float d = x[b].d * f16(w[b].d);
    const float dmin = x[b].d * f16(w[b].dmin);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc);
    acc_m = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(msum), acc_m);
  }
  *s = hsum_ps(acc) - hsum_ps(acc_m);
}

void vec_dot_q3_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q3_K* w = static_cast<const block_q3_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m256i low2 = _mm256_set1_epi8(3);
  const __m256i four = _mm256_set1_epi8(4);
  __m128i pidx[8];
  for (int k = 0; k < 8; ++k) pidx[k] = pair_index(2 * k);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint64_t lo64, hi64;
    x86::q3_K_scales(w[b].scales, lo64, hi64);
    const __m128i S = _mm_sub_epi8(_mm_set_epi64x(static_cast<int64_t>(hi64), static_cast<int64_t>(lo64)), _mm_set1_epi8(32));
    const __m256i sc16 = _mm256_cvtepi8_epi16(S);
    // 4 * sum_j sc_j * bsum_j, the offset of code = u - 4.
    const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(loadu(x[b].bsums), sc16), 2);
    const __m256i hm = loadu(w[b].hmask);
    __m256i isum = _mm256_sub_epi32(_mm256_setzero_si256(), corr);
    for (int h = 0; h < 2; ++h) {
      const __m256i q = loadu(w[b].qs + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << (4 * h + j)));
        const __m256i hb = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit), four);
        const __m256i u = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * j), low2), hb);
        const __m256i p = _mm256_maddubs_epi16(u, loadu(x[b].qs + 128 * h + 32 * j));
        const int i = 8 * h + 2 * j;
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale_pair(S, pidx[i / 2])));
      }
    }
    const float d = x[b].d * f16(w[b].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc);
  }
  *s = hsum_ps(acc);
}

void vec_dot_q6_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q6_K* w = static_cast<const block_q6_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i low2 = _mm256_set1_epi8(3);
  __m128i pidx[8];
  for (int k = 0; k < 8; ++k) pidx[k] = pair_index(2 * k);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const __m128i S = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales));
    const __m256i sc16 = _mm256_cvtepi8_epi16(S);
    // 32 * sum_j sc_j * bsum_j, the offset of code = u - 32.
    const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(loadu(x[b].bsums), sc16), 5);
    __m256i isum = _mm256_sub_epi32(_mm256_setzero_si256(), corr);
    for (int h = 0; h < 2; ++h) {
      const __m256i a = loadu(w[b].ql + 64 * h);
      const __m256i c = loadu(w[b].ql + 64 * h + 32);
      const __m256i hh = loadu(w[b].qh + 32 * h);
      __m256i u[4];
      u[0] = _mm256_or_si256(_mm256_and_si256(a, low4), _mm256_slli_epi16(_mm256_and_si256(hh, low2), 4));
      u[1] = _mm256_or_si256(_mm256_and_si256(c, low4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hh, 2), low2), 4));
      u[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hh, 4), low2), 4));
      u[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(c, 4), low4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hh, 6), low2), 4));
      for (int k = 0; k < 4; ++k) {
        const __m256i p = _mm256_maddubs_epi16(u[k], loadu(x[b].qs + 128 * h + 32 * k));
        const int i = 8 * h + 2 * k;
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale_pair(S, pidx[i / 2])));
      }
    }
    const float d = x[b].d * f16(w[b].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc);
  }
  *s = hsum_ps(acc);
}

}  // namespace les::kernels::avx2
