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
#include "kernels/x86/prefetch.h"

namespace les::kernels::avx2 {
namespace {

using x86::prefetch_ahead;  // the decode matvec's prefetch (x86/prefetch.h)

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


// pshufb index for the int16 scale words of S16 (8 words, the same in both
// 128-bit lanes): word k to all 8 words of the low lane, word k + 1 to all 8
// words of the high lane, i.e. the scales of 16-element sub-blocks k and k + 1
// of one 32-byte chunk.
inline __m256i pair_word_index(int k) {
  const auto w = [](int i) { return static_cast<int64_t>(0x0001000100010001LL * ((2 * i) | ((2 * i + 1) << 8))); };
  return _mm256_set_epi64x(w(k + 1), w(k + 1), w(k), w(k));
}

// The 8 int8 values in the low 64 bits of v as int16 words, in both 128-bit lanes.
inline __m256i words_both_lanes(__m128i v) { return _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(v)); }

// Activation block b of row t (rows x_stride bytes apart).
inline const block_q8_K& xblock(const uint8_t* x, size_t x_stride, int t, int64_t b) {
  return reinterpret_cast<const block_q8_K*>(x + static_cast<size_t>(t) * x_stride)[b];
}

// Q3_K against NX activation rows: each row's isum and float accumulation are
// exactly those of the NX = 1 instance (which is vec_dot_q3_K_q8_K).
// Per 32-element chunk (h, j): u = ((q >> 2j) & 3) | hbit << 2, with hbit =
// bit 4h + j of hmask moved to bit 2 by one 16-bit shift (bits shifted in from
// the neighbouring byte are masked off); the scale pair comes from one pshufb
// of the int16 scales.
template <int NX>
inline void dot_q3_K(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  const block_q3_K* w = static_cast<const block_q3_K*>(vw);
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  const __m256i low2 = _mm256_set1_epi8(3);
  const __m256i four = _mm256_set1_epi8(4);
  const __m256i pidx[4] = {pair_word_index(0), pair_word_index(2), pair_word_index(4), pair_word_index(6)};
  __m256 acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    if constexpr (NX == 1) prefetch_ahead(w + b);
    uint64_t lo64, hi64;
    x86::q3_K_scales(w[b].scales, lo64, hi64);
    const __m128i S = _mm_sub_epi8(_mm_set_epi64x(static_cast<int64_t>(hi64), static_cast<int64_t>(lo64)), _mm_set1_epi8(32));
    const __m256i sc16 = _mm256_cvtepi8_epi16(S);
    const __m256i sc_lo = words_both_lanes(S), sc_hi = words_both_lanes(_mm_srli_si128(S, 8));
    __m256i isum[NX];
    // 4 * sum_j sc_j * bsum_j, the offset of code = u - 4.
    for (int t = 0; t < NX; ++t)
      isum[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                 _mm256_slli_epi32(_mm256_madd_epi16(loadu(xblock(x, x_stride, t, b).bsums), sc16), 2));
    const __m256i hm = loadu(w[b].hmask);
    for (int h = 0; h < 2; ++h) {
      const __m256i q = loadu(w[b].qs + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const int bit = 4 * h + j;
        const __m256i hs = bit < 2 ? _mm256_slli_epi16(hm, 2 - bit) : bit == 2 ? hm : _mm256_srli_epi16(hm, bit - 2);
        const __m256i lo = j == 0 ? _mm256_and_si256(q, low2) : _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), low2);
        const __m256i u = _mm256_or_si256(lo, _mm256_and_si256(hs, four));
        const __m256i sc = _mm256_shuffle_epi8(h == 0 ? sc_lo : sc_hi, pidx[j]);
        for (int t = 0; t < NX; ++t) {
          const __m256i p = _mm256_maddubs_epi16(u, loadu(xblock(x, x_stride, t, b).qs + 128 * h + 32 * j));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, sc));
        }
      }
    }
    const float dw = f16(w[b].d);
    for (int t = 0; t < NX; ++t) {
      const float d = xblock(x, x_stride, t, b).d * dw;
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum[t]), acc[t]);
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = hsum_ps(acc[t]);
}

// Q4_K against NX activation rows (NX = 1 is vec_dot_q4_K_q8_K).
template <int NX>
inline void dot_q4_K(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  const block_q4_K* w = static_cast<const block_q4_K*>(vw);
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc[NX], acc_m[NX];
  for (int t = 0; t < NX; ++t) acc[t] = acc_m[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    if constexpr (NX == 1) prefetch_ahead(w + b);
    uint64_t sc64, m64;
    x86::k4_scales_mins(w[b].scales, sc64, m64);
    // msum = sum_j m_j * (bsums[2j] + bsums[2j+1]) as 8 int32 lanes.
    const __m256i mins = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(m64)));
    const __m256i mins_pairs = _mm256_or_si256(mins, _mm256_slli_epi32(mins, 16));  // int16 pairs (m_j, m_j)
    // The 8 scales as int16 words, in both 128-bit lanes.
    const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc64))));
    __m256i isum[NX];
    for (int t = 0; t < NX; ++t) isum[t] = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i q = loadu(w[b].qs + 32 * j);
      const __m256i lo = _mm256_and_si256(q, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      const __m256i sc_lo = _mm256_shuffle_epi8(sc16, word_index(2 * j));
      const __m256i sc_hi = _mm256_shuffle_epi8(sc16, word_index(2 * j + 1));
      for (int t = 0; t < NX; ++t) {
        const int8_t* xq = xblock(x, x_stride, t, b).qs + 64 * j;
        const __m256i plo = _mm256_maddubs_epi16(lo, loadu(xq));
        const __m256i phi = _mm256_maddubs_epi16(hi, loadu(xq + 32));
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(plo, sc_lo));
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(phi, sc_hi));
      }
    }
    const float dw = f16(w[b].d), dminw = f16(w[b].dmin);
    for (int t = 0; t < NX; ++t) {
      const block_q8_K& y = xblock(x, x_stride, t, b);
      const __m256i msum = _mm256_madd_epi16(loadu(y.bsums), mins_pairs);
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(y.d * dw), _mm256_cvtepi32_ps(isum[t]), acc[t]);
      acc_m[t] = _mm256_fmadd_ps(_mm256_set1_ps(y.d * dminw), _mm256_cvtepi32_ps(msum), acc_m[t]);
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = hsum_ps(acc[t]) - hsum_ps(acc_m[t]);
}

// Q6_K against NX activation rows (NX = 1 is vec_dot_q6_K_q8_K).
template <int NX>
inline void dot_q6_K(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  const block_q6_K* w = static_cast<const block_q6_K*>(vw);
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i pidx[4] = {pair_word_index(0), pair_word_index(2), pair_word_index(4), pair_word_index(6)};
  __m256 acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    if constexpr (NX == 1) prefetch_ahead(w + b);
    const __m128i S = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales));
    const __m256i sc16 = _mm256_cvtepi8_epi16(S);
    const __m256i sc_lo = words_both_lanes(S), sc_hi = words_both_lanes(_mm_srli_si128(S, 8));
    __m256i isum[NX];
    // 32 * sum_j sc_j * bsum_j, the offset of code = u - 32.
    for (int t = 0; t < NX; ++t)
      isum[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                 _mm256_slli_epi32(_mm256_madd_epi16(loadu(xblock(x, x_stride, t, b).bsums), sc16), 5));
    for (int h = 0; h < 2; ++h) {
      const __m256i a = loadu(w[b].ql + 64 * h);
      const __m256i c = loadu(w[b].ql + 64 * h + 32);
      const __m256i hh = loadu(w[b].qh + 32 * h);
      __m256i u[4];
      u[0] = _mm256_or_si256(_mm256_and_si256(a, low4), _mm256_and_si256(_mm256_slli_epi16(hh, 4), _mm256_set1_epi8(0x30)));
      u[1] = _mm256_or_si256(_mm256_and_si256(c, low4), _mm256_and_si256(_mm256_slli_epi16(hh, 2), _mm256_set1_epi8(0x30)));
      u[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low4), _mm256_and_si256(hh, _mm256_set1_epi8(0x30)));
      u[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(c, 4), low4),
                             _mm256_and_si256(_mm256_srli_epi16(hh, 2), _mm256_set1_epi8(0x30)));
      for (int k = 0; k < 4; ++k) {
        const __m256i sc = _mm256_shuffle_epi8(h == 0 ? sc_lo : sc_hi, pidx[k]);
        for (int t = 0; t < NX; ++t) {
          const __m256i p = _mm256_maddubs_epi16(u[k], loadu(xblock(x, x_stride, t, b).qs + 128 * h + 32 * k));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, sc));
        }
      }
    }
    const float dw = f16(w[b].d);
    for (int t = 0; t < NX; ++t) {
      const float d = xblock(x, x_stride, t, b).d * dw;
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum[t]), acc[t]);
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = hsum_ps(acc[t]);
}

// One VecDotMultiFn over the templates above: nx in 1..kVecDotMultiMax.
template <template <int> class K>
void dot_multi(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride, int nx) {
  switch (nx) {
    case 1: K<1>::run(n, s, s_stride, w, x, x_stride); break;
    case 2: K<2>::run(n, s, s_stride, w, x, x_stride); break;
    case 3: K<3>::run(n, s, s_stride, w, x, x_stride); break;
    default: K<4>::run(n, s, s_stride, w, x, x_stride); break;
  }
}
template <int NX> struct Q3K { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q3_K<NX>(n, s, ss, w, x, xs); } };
template <int NX> struct Q4K { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q4_K<NX>(n, s, ss, w, x, xs); } };
template <int NX> struct Q6K { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q6_K<NX>(n, s, ss, w, x, xs); } };

}  // namespace

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

void vec_dot_q3_K_q8_K(int64_t n, float* s, const void* w, const void* x) { dot_q3_K<1>(n, s, 1, w, x, 0); }
void vec_dot_q4_K_q8_K(int64_t n, float* s, const void* w, const void* x) { dot_q4_K<1>(n, s, 1, w, x, 0); }
void vec_dot_q6_K_q8_K(int64_t n, float* s, const void* w, const void* x) { dot_q6_K<1>(n, s, 1, w, x, 0); }

void vec_dot_multi_q3_K_q8_K(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                             int nx) {
  dot_multi<Q3K>(n, s, s_stride, w, x, x_stride, nx);
}
void vec_dot_multi_q4_K_q8_K(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                             int nx) {
  dot_multi<Q4K>(n, s, s_stride, w, x, x_stride, nx);
}
void vec_dot_multi_q6_K_q8_K(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                             int nx) {
  dot_multi<Q6K>(n, s, s_stride, w, x, x_stride, nx);
}

}  // namespace les::kernels::avx2
