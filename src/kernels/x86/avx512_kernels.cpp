// AVX-512 kernels of F16 and of the 32-element block formats Q4_0 and Q5_0
// (against Q8_0, using VNNI vpdpbusd; Q8_0 itself runs the AVX2 kernels,
// measured faster, avx512.cpp); the K-quants are in
// avx512_kquants.cpp. Each is one template over NX activation rows: NX = 1 is
// the vec_dot, NX = 2..4 the vec_dot_multi (kernels.h), which decodes each
// weight block once and meets every row with it. Every row of NX > 1 runs the
// float operations of NX = 1 on its own accumulators, in the same order, so
// vec_dot_multi is bit-identical to vec_dot per row.
//
// Same integer formulation as the AVX2 tier (avx2.cpp): codes as unsigned
// bytes with the constant offset folded back through a second vpdpbusd, so
// every block's int32 sum is exactly the reference's (ref_vec_dot.cpp). A
// 512-bit vector covers two 32-element blocks.
#include <cstring>
#include <type_traits>

#include "kernels/x86/avx512_common.h"
#include "kernels/x86/avx512_kernels.h"

namespace les::kernels::avx512 {
namespace {

// 16 F16 values at p as floats. Two 256-bit vcvtph2ps and an insert, not one
// 512-bit vcvtph2ps: on Zen 4 the 512-bit form halves the conversion rate
// (bench/results/code_choices-2026-12-07.md); the values are exact either way.
inline __m512 cvt16(const fp16_t* p) {
  const __m128i* q = reinterpret_cast<const __m128i*>(p);
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_cvtph_ps(_mm_loadu_si128(q))),
                            _mm256_cvtph_ps(_mm_loadu_si128(q + 1)), 1);
}

// F16 against NX F16 rows. Per row four 16-lane accumulators: accumulator k
// sums lanes 16k..16k+15 of every 64-element chunk, then accumulator 0 the
// 16-element groups after the last whole chunk; the sum is
// reduce_add((acc0 + acc1) + (acc2 + acc3)), then the scalar tail in element
// order. Each weight group is converted once and met by every row.
template <int NX>
inline void dot_f16(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride) {
  const fp16_t* a = static_cast<const fp16_t*>(w);
  const fp16_t* b[NX];
  for (int t = 0; t < NX; ++t)
    b[t] = reinterpret_cast<const fp16_t*>(static_cast<const uint8_t*>(x) + static_cast<size_t>(t) * x_stride);
  __m512 acc[NX][4];
  for (int t = 0; t < NX; ++t)
    for (int k = 0; k < 4; ++k) acc[t][k] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int k = 0; k < 4; ++k) {
      const __m512 va = cvt16(a + i + 16 * k);
      for (int t = 0; t < NX; ++t)
        acc[t][k] = _mm512_fmadd_ps(va, cvt16(b[t] + i + 16 * k), acc[t][k]);
    }
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 va = cvt16(a + i);
    for (int t = 0; t < NX; ++t) acc[t][0] = _mm512_fmadd_ps(va, cvt16(b[t] + i), acc[t][0]);
  }
  for (int t = 0; t < NX; ++t) {
    float sum = _mm512_reduce_add_ps(
        _mm512_add_ps(_mm512_add_ps(acc[t][0], acc[t][1]), _mm512_add_ps(acc[t][2], acc[t][3])));
    for (int64_t j = i; j < n; ++j) sum += f16(a[j]) * f16(b[t][j]);
    s[t * s_stride] = sum;
  }
}

// Q4_0 (Q5 = false: u = nibble, code = u - 8) or Q5_0 (Q5 = true: u = nibble +
// 16 * qh bit, code = u - 16) against NX Q8_0 rows: sum code * y =
// dpbusd(u, y) - dpbusd(off, y). The 32 qh bits of a Q5_0 block are directly
// a byte mask (AVX512BW). Per row one 16-lane accumulator over block pairs
// (lanes 0..7 the first block times dw0 dx0, lanes 8..15 the second), reduced
// with _mm512_reduce_add_ps, then an odd last block added as
// hsum256_ps(d * isum).
template <int NX, bool Q5>
inline void dot_q45_0(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  using Block = std::conditional_t<Q5, block_q5_0, block_q4_0>;
  const Block* w = static_cast<const Block*>(vw);
  const int64_t nb = n / 32;
  const __m512i off = _mm512_set1_epi8(Q5 ? 16 : 8);
  __m512 acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(nibbles32(w[b].qs)), nibbles32(w[b + 1].qs), 1);
    if constexpr (Q5) {
      uint32_t h0, h1;
      std::memcpy(&h0, w[b].qh, 4);
      std::memcpy(&h1, w[b + 1].qh, 4);
      const __mmask64 hk = static_cast<__mmask64>(h0) | (static_cast<__mmask64>(h1) << 32);
      u = _mm512_mask_add_epi8(u, hk, u, off);
    }
    const float dw0 = f16(w[b].d), dw1 = f16(w[b + 1].d);
    for (int t = 0; t < NX; ++t) {
      const block_q8_0& x0 = xblock<block_q8_0>(vx, x_stride, t, b);
      const block_q8_0& x1 = xblock<block_q8_0>(vx, x_stride, t, b + 1);
      const __m512i y = load2x256(x0.qs, x1.qs);
      const __m512i pos = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y);
      const __m512i neg = _mm512_dpbusd_epi32(_mm512_setzero_si512(), off, y);
      const __m512 d = halves_ps(dw0 * f16(x0.d), dw1 * f16(x1.d));
      acc[t] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(pos, neg)), acc[t]);
    }
  }
  float sum[NX];
  for (int t = 0; t < NX; ++t) sum[t] = _mm512_reduce_add_ps(acc[t]);
  if (b < nb) {
    __m256i u = nibbles32(w[b].qs);
    if constexpr (Q5) {
      uint32_t h0;
      std::memcpy(&h0, w[b].qh, 4);
      u = _mm256_mask_add_epi8(u, static_cast<__mmask32>(h0), u, _mm512_castsi512_si256(off));
    }
    for (int t = 0; t < NX; ++t) {
      const block_q8_0& x0 = xblock<block_q8_0>(vx, x_stride, t, b);
      const __m256i y = loadu256(x0.qs);
      const __m256i pos = _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, y);
      const __m256i neg = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm512_castsi512_si256(off), y);
      sum[t] += hsum256_ps(_mm256_mul_ps(_mm256_set1_ps(f16(w[b].d) * f16(x0.d)),
                                         _mm256_cvtepi32_ps(_mm256_sub_epi32(pos, neg))));
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = sum[t];
}

// K<NX>::run adapters for dot_multi (avx512_common.h).
template <int NX> struct F16 { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_f16<NX>(n, s, ss, w, x, xs); } };
template <int NX> struct Q40 { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q45_0<NX, false>(n, s, ss, w, x, xs); } };
template <int NX> struct Q50 { static void run(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) { dot_q45_0<NX, true>(n, s, ss, w, x, xs); } };

}  // namespace

void vec_dot_f16(int64_t n, float* s, const void* w, const void* x) { dot_f16<1>(n, s, 1, w, x, 0); }
void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* w, const void* x) { dot_q45_0<1, false>(n, s, 1, w, x, 0); }
void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* w, const void* x) { dot_q45_0<1, true>(n, s, 1, w, x, 0); }

void vec_dot_multi_f16(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx) {
  dot_multi<F16>(n, s, ss, w, x, xs, nx);
}
void vec_dot_multi_q4_0_q8_0(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx) {
  dot_multi<Q40>(n, s, ss, w, x, xs, nx);
}
void vec_dot_multi_q5_0_q8_0(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx) {
  dot_multi<Q50>(n, s, ss, w, x, xs, nx);
}

}  // namespace les::kernels::avx512
