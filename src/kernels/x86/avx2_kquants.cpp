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

namespace les::kernels::avx2 {
namespace {

// An int16 vector holding `lo` in lanes 0..7 and `hi` in lanes 8..15: the
// scales of two consecutive 16-element sub-blocks in one 32-byte chunk.
inline __m256i scale_pair(int lo, int hi) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)), _mm_set1_epi16(static_cast<int16_t>(lo)));
}

// Q4_K/Q5_K: decode 8 six-bit scales and mins (block_elements.h k4_scale_min).
inline void decode_k4_scales(const uint8_t* s, uint8_t sc[8], uint8_t m[8]) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = s[j] & 63;
    m[j] = s[j + 4] & 63;
  }
  for (int j = 4; j < 8; ++j) {
    sc[j] = static_cast<uint8_t>((s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4));
    m[j] = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

// msum of Q4_K/Q5_K: sum_j m_j * (bsums[2j] + bsums[2j+1]), as 8 int32 lanes.
inline __m256i k4_min_sums(const block_q8_K& y, const uint8_t m[8]) {
  const __m128i m8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(m));
  const __m128i m16 = _mm_cvtepu8_epi16(m8);
  // Lane pairs (2j, 2j+1) of the int16 vector carry m_j.
  const __m256i mins = _mm256_cvtepu16_epi32(m16);  // 8 x int32: m_j
  const __m256i mins_pairs = _mm256_or_si256(mins, _mm256_slli_epi32(mins, 16));
  return _mm256_madd_epi16(loadu(y.bsums), mins_pairs);
}

}  // namespace

void vec_dot_q4_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q4_K* w = static_cast<const block_q4_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint8_t sc[8], m[8];
    decode_k4_scales(w[b].scales, sc, m);
    const __m256i msum = k4_min_sums(x[b], m);
    __m256i isum = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i q = loadu(w[b].qs + 32 * j);
      const __m256i lo = _mm256_and_si256(q, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      const __m256i plo = _mm256_maddubs_epi16(lo, loadu(x[b].qs + 64 * j));
      const __m256i phi = _mm256_maddubs_epi16(hi, loadu(x[b].qs + 64 * j + 32));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(plo, _mm256_set1_epi16(sc[2 * j])));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(phi, _mm256_set1_epi16(sc[2 * j + 1])));
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
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint8_t sc[8], m[8];
    decode_k4_scales(w[b].scales, sc, m);
    const __m256i msum = k4_min_sums(x[b], m);
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
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(plo, _mm256_set1_epi16(sc[2 * j])));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(phi, _mm256_set1_epi16(sc[2 * j + 1])));
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
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const __m128i sm = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(0x0F)));
    const __m256i msum = _mm256_madd_epi16(loadu(x[b].bsums), mins);
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q = loadu(w[b].qs + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const __m256i u = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), low2);
        const __m256i p = _mm256_maddubs_epi16(u, loadu(x[b].qs + 128 * h + 32 * j));
        const int i = 8 * h + 2 * j;
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale_pair(w[b].scales[i] & 0x0F, w[b].scales[i + 1] & 0x0F)));
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
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* ps = w[b].scales;
    int16_t sc[16];
    for (int i = 0; i < 16; ++i) {
      const int low = i < 8 ? (ps[i] & 0x0F) : (ps[i - 8] >> 4);
      const int high = (ps[8 + i % 4] >> (2 * (i / 4))) & 3;
      sc[i] = static_cast<int16_t>((low | (high << 4)) - 32);
    }
    const __m256i sc16 = loadu(sc);
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
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale_pair(sc[i], sc[i + 1])));
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
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const int8_t* sc = w[b].scales;
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)));
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
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale_pair(sc[i], sc[i + 1])));
      }
    }
    const float d = x[b].d * f16(w[b].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc);
  }
  *s = hsum_ps(acc);
}

}  // namespace les::kernels::avx2
