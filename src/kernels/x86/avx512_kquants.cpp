// AVX-512 K-quant dot products against Q8_K: Q3_K, Q4_K, Q5_K, Q6_K, each as
// one template over NX activation rows. NX = 1 is the vec_dot; NX = 2..4 the
// vec_dot_multi (kernels.h), which decodes each weight super-block once and
// meets every row with it.
//
// Integer formulation as the AVX2 tier (avx2_kquants.cpp): codes as unsigned
// bytes (vpmaddubsw against the int8 activations), signed offsets folded back
// through Q8_K's bsums, so every block's int32 sums are exactly the
// reference's (block_elements.h). A 512-bit vector covers 64 bytes: four
// 16-element sub-blocks whose int16 scales are spread over the lanes with
// vpermw. Float order per row: one 16-lane accumulator, acc = fma(dx * dw,
// float(isum), acc) super-block after super-block, then _mm512_reduce_add_ps
// (minus the 8-lane min accumulator's hsum256_ps for Q4_K / Q5_K). Every row
// of NX > 1 runs exactly the float operations of NX = 1 on its own
// accumulators, so vec_dot_multi is bit-identical to vec_dot per row.
#include <type_traits>

#include "kernels/x86/avx512_common.h"
#include "kernels/x86/avx512_kernels.h"
#include "kernels/x86/kquant_scales.h"
#include "kernels/x86/prefetch.h"

namespace les::kernels::avx512 {
namespace {

using x86::prefetch_ahead;  // the decode matvec's prefetch (x86/prefetch.h)

// Q4_K (Q5 = false) or Q5_K (Q5 = true) against NX rows. Per super-block:
// u = 4-bit code (+ 16 * high bit for Q5_K), isum = sum_j sc_j sum u * q over
// the 8 sub-blocks of 32, msum = sum_j m_j * bsum_j (Q8_K's 16-element bsums,
// two per sub-block); s = sum_b dx dw isum - sum_b dx dmin msum.
template <int NX, bool Q5>
inline void dot_q45_K(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  using Block = std::conditional_t<Q5, block_q5_K, block_q4_K>;
  const Block* w = static_cast<const Block*>(vw);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i one = _mm512_set1_epi8(1);
  const __m512i shift_0_4 = halves_epi16(0, 4);  // low nibbles for bytes 0..31, high for 32..63
  // Q5_K: qh bit of element 64 j + l is bit 2 j of qh[l % 32] (first 32) or 2 j + 1 (next 32).
  const __m512i hshift[4] = {halves_epi16(0, 1), halves_epi16(2, 3), halves_epi16(4, 5), halves_epi16(6, 7)};
  const __m512i idx[4] = {pair_index(0), pair_index(2), pair_index(4), pair_index(6)};
  __m512 acc[NX];
  __m256 acc_m[NX];
  for (int t = 0; t < NX; ++t) {
    acc[t] = _mm512_setzero_ps();
    acc_m[t] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < n / kQKK; ++b) {
    if constexpr (NX == 1) prefetch_ahead(w + b);
    uint64_t sc64, m64;
    x86::k4_scales_mins(w[b].scales, sc64, m64);
    const __m512i sc16 = _mm512_zextsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc64))));
    const __m256i mins = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(m64)));
    const __m256i mpair = _mm256_or_si256(mins, _mm256_slli_epi32(mins, 16));
    __m512i isum[NX];
    for (int t = 0; t < NX; ++t) isum[t] = _mm512_setzero_si512();
    for (int j = 0; j < 4; ++j) {
      // 64 elements 64j..64j+63: the 32 bytes of chunk j, low nibbles then high.
      __m512i u = _mm512_and_si512(_mm512_srlv_epi16(bcast256(w[b].qs + 32 * j), shift_0_4), low4);
      if constexpr (Q5) {
        const __m512i hb = _mm512_and_si512(_mm512_srlv_epi16(bcast256(w[b].qh), hshift[j]), one);
        u = _mm512_or_si512(u, _mm512_slli_epi16(hb, 4));
      }
      const __m512i sc = _mm512_permutexvar_epi16(idx[j], sc16);
      for (int t = 0; t < NX; ++t) {
        const __m512i p = _mm512_maddubs_epi16(u, loadu512(xblock<block_q8_K>(vx, x_stride, t, b).qs + 64 * j));
        isum[t] = _mm512_dpwssd_epi32(isum[t], p, sc);  // += madd(p, sc), one instruction (VNNI)
      }
    }
    const float dw = f16(w[b].d), mw = f16(w[b].dmin);
    for (int t = 0; t < NX; ++t) {
      const block_q8_K& xb = xblock<block_q8_K>(vx, x_stride, t, b);
      const __m256i msum = _mm256_madd_epi16(loadu256(xb.bsums), mpair);
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(xb.d * dw), _mm512_cvtepi32_ps(isum[t]), acc[t]);
      acc_m[t] = _mm256_fmadd_ps(_mm256_set1_ps(xb.d * mw), _mm256_cvtepi32_ps(msum), acc_m[t]);
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = _mm512_reduce_add_ps(acc[t]) - hsum256_ps(acc_m[t]);
}

// Q6_K against NX rows: u = 4 low bits from ql + 2 high bits from qh (0..63),
// code = u - 32; isum = sum_j sc_j sum u * q - 32 sum_j sc_j bsum_j over the 16
// sub-blocks of 16; s = sum_b dx dw isum.
template <int NX>
inline void dot_q6_K(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  const block_q6_K* w = static_cast<const block_q6_K*>(vw);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i low2 = _mm512_set1_epi8(3);
  const __m512i sh01 = halves_epi16(0, 2), sh23 = halves_epi16(4, 6);
  const __m512i idx[4] = {quad_index(0), quad_index(4), quad_index(8), quad_index(12)};
  __m512 acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    if constexpr (NX == 1) prefetch_ahead(w + b);
    const __m256i sc16y = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales)));
    const __m512i sc16 = _mm512_zextsi256_si512(sc16y);
    __m512i isum[NX];
    for (int t = 0; t < NX; ++t) {
      // 32 * sum_j sc_j * bsum_j: the offset of code = u - 32.
      const __m256i corr =
          _mm256_slli_epi32(_mm256_madd_epi16(loadu256(xblock<block_q8_K>(vx, x_stride, t, b).bsums), sc16y), 5);
      isum[t] = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), corr));
    }
    for (int h = 0; h < 2; ++h) {
      const __m512i l = loadu512(w[b].ql + 64 * h);
      const __m512i hh = bcast256(w[b].qh + 32 * h);
      const __m512i u01 = _mm512_or_si512(_mm512_and_si512(l, low4),
                                          _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(hh, sh01), low2), 4));
      const __m512i u23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), low4),
                                          _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(hh, sh23), low2), 4));
      const __m512i sc01 = _mm512_permutexvar_epi16(idx[2 * h], sc16);
      const __m512i sc23 = _mm512_permutexvar_epi16(idx[2 * h + 1], sc16);
      for (int t = 0; t < NX; ++t) {
        const int8_t* q = xblock<block_q8_K>(vx, x_stride, t, b).qs + 128 * h;
        const __m512i p01 = _mm512_maddubs_epi16(u01, loadu512(q));
        const __m512i p23 = _mm512_maddubs_epi16(u23, loadu512(q + 64));
        isum[t] = _mm512_add_epi32(isum[t], _mm512_madd_epi16(p01, sc01));
        isum[t] = _mm512_add_epi32(isum[t], _mm512_madd_epi16(p23, sc23));
      }
    }
    const float dw = f16(w[b].d);
    for (int t = 0; t < NX; ++t) {
      const float d = xblock<block_q8_K>(vx, x_stride, t, b).d * dw;
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(isum[t]), acc[t]);
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = _mm512_reduce_add_ps(acc[t]);
}

// Q3_K against NX rows: u = 2 low bits from qs + 4 * hmask bit (0..7), code =
// u - 4; isum = sum_j sc_j sum u * q - 4 sum_j sc_j bsum_j over the 16
// sub-blocks of 16 (signed 6-bit scales, q3_K_scales); s = sum_b dx dw isum.
//
// A 64-byte chunk (h, pr) holds element pair j = 2 pr (bytes 0..31) and
// j + 1 (bytes 32..63) of qs byte l = 32 h + byte % 32. The low bits are taken
// in place, without a per-chunk shift: bytes 0..31 keep bits 0-1 (u), bytes
// 32..63 bits 2-3 (4 u), of qs (pr = 0) or qs >> 4 (pr = 1); the hmask bit is
// a byte mask (vptestmb) that adds 4 or 16. The 4 u half is met by the scale
// sc_j, the u half by 4 sc_j (Q3Scales), so every int32 lane sums 4 times its
// exact value; one arithmetic shift by 2 per super-block restores it (exact:
// every term is a multiple of 4; |4 isum| < 2^25). Each lane thus holds the
// integer it always held (the pairs and sub-blocks of the plain formulation),
// and the float operations are unchanged: the same bits as before.
template <int NX>
inline void dot_q3_K(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  const block_q3_K* w = static_cast<const block_q3_K*>(vw);
  const __m512i lowbits = halves_epi8(0x03, 0x0C);
  const __m512i hbits = halves_epi8(4, 16);
  // hmask bit of element 128 h + 32 j + l is bit 4 h + j of hmask[l].
  const __m512i hsel[4] = {halves_epi8(1, 2), halves_epi8(4, 8), halves_epi8(16, 32), halves_epi8(64, 128)};
  const __m512i idx[4] = {q3_index(0), q3_index(1), q3_index(2), q3_index(3)};
  __m512 acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    if constexpr (NX == 1) prefetch_ahead(w + b);
    uint64_t lo64, hi64;
    x86::q3_K_scales(w[b].scales, lo64, hi64);
    const __m128i S =
        _mm_sub_epi8(_mm_set_epi64x(static_cast<int64_t>(hi64), static_cast<int64_t>(lo64)), _mm_set1_epi8(32));
    const __m256i sc16y = _mm256_cvtepi8_epi16(S);
    // int16 lanes 0..15: 4 sc_i (for the u halves), lanes 16..31: sc_i (for the 4 u halves).
    const __m512i sc4 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_slli_epi16(sc16y, 2)), sc16y, 1);
    __m512i isum4[NX];
    for (int t = 0; t < NX; ++t) isum4[t] = _mm512_setzero_si512();
    const __m512i hm = bcast256(w[b].hmask);
    for (int h = 0; h < 2; ++h) {
      const __m512i q = bcast256(w[b].qs + 32 * h);
      for (int pr = 0; pr < 2; ++pr) {  // element pairs (j = 2 pr, 2 pr + 1)
        const __m512i qp = pr == 0 ? q : _mm512_srli_epi16(q, 4);  // bits shifted in from the next byte are masked off
        const __mmask64 hb = _mm512_test_epi8_mask(hm, hsel[2 * h + pr]);
        const __m512i low = _mm512_and_si512(qp, lowbits);
        const __m512i u = _mm512_mask_add_epi8(low, hb, low, hbits);  // (u | 4 u) per half
        const __m512i sc = _mm512_permutexvar_epi16(idx[2 * h + pr], sc4);
        for (int t = 0; t < NX; ++t) {
          const int8_t* xq = xblock<block_q8_K>(vx, x_stride, t, b).qs + 128 * h + 64 * pr;
          // pairs <= 2 * 28 * 128 < 2^15: maddubs does not saturate.
          const __m512i p = _mm512_maddubs_epi16(u, loadu512(xq));
          isum4[t] = _mm512_dpwssd_epi32(isum4[t], p, sc);
        }
      }
    }
    const float dw = f16(w[b].d);
    for (int t = 0; t < NX; ++t) {
      const block_q8_K& xb = xblock<block_q8_K>(vx, x_stride, t, b);
      // 4 * sum_j sc_j * bsum_j: the offset of code = u - 4 (lanes 0..7).
      const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(loadu256(xb.bsums), sc16y), 2);
      const __m512i isum = _mm512_sub_epi32(_mm512_srai_epi32(isum4[t], 2), _mm512_zextsi256_si512(corr));
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(xb.d * dw), _mm512_cvtepi32_ps(isum), acc[t]);
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = _mm512_reduce_add_ps(acc[t]);
}

// K<NX>::run adapters for dot_multi (avx512_common.h).
template <int NX> struct Q3K { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q3_K<NX>(n, s, ss, w, x, xs); } };
template <int NX> struct Q4K { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q45_K<NX, false>(n, s, ss, w, x, xs); } };
template <int NX> struct Q5K { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q45_K<NX, true>(n, s, ss, w, x, xs); } };
template <int NX> struct Q6K { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q6_K<NX>(n, s, ss, w, x, xs); } };

}  // namespace

void vec_dot_q3_K_q8_K(int64_t n, float* s, const void* w, const void* x) { dot_q3_K<1>(n, s, 1, w, x, 0); }
void vec_dot_q4_K_q8_K(int64_t n, float* s, const void* w, const void* x) { dot_q45_K<1, false>(n, s, 1, w, x, 0); }
void vec_dot_q5_K_q8_K(int64_t n, float* s, const void* w, const void* x) { dot_q45_K<1, true>(n, s, 1, w, x, 0); }
void vec_dot_q6_K_q8_K(int64_t n, float* s, const void* w, const void* x) { dot_q6_K<1>(n, s, 1, w, x, 0); }

void vec_dot_multi_q3_K_q8_K(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx) {
  dot_multi<Q3K>(n, s, ss, w, x, xs, nx);
}
void vec_dot_multi_q4_K_q8_K(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx) {
  dot_multi<Q4K>(n, s, ss, w, x, xs, nx);
}
void vec_dot_multi_q5_K_q8_K(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx) {
  dot_multi<Q5K>(n, s, ss, w, x, xs, nx);
}
void vec_dot_multi_q6_K_q8_K(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx) {
  dot_multi<Q6K>(n, s, ss, w, x, xs, nx);
}

}  // namespace les::kernels::avx512
