// AVX2 kernels of the 4-bit codebook formats: IQ4_XS x Q8_K dot products and
// the IQ4_XS / MXFP4 dequantisers (MXFP4's dot product is avx2.cpp's 32-block
// loop). Everything here gives the scalar reference's bits.
//
// Dequantisation: the same F32 operations as ref_codebook4.cpp, 8 lanes at a
// time: IQ4_XS dl = d * float(ls - 32), then dl * float(level); MXFP4
// float(level) * 2^(e - 128). Each is one rounding of exact operands, so
// lane order cannot matter.
//
// IQ4_XS x Q8_K dot products, bit-identical to the scalar reference
// (vec_dot_iq4_xs_q8_K_ref): per super-block the integer sum
//   isum = sum_j (ls_j - 32) * sum_{e in sub-block j} v[q_e] * q8[e]
// is formed exactly in int32 lanes and reduced, then the reference's float
// step acc += float(isum) * (dx * dw) runs in the same order on a scalar
// accumulator (one F32 multiply and add per 256 elements; this file is built
// with -ffp-contract=off so the compiler cannot fuse them).
//
// Per sub-block of 32: the 16 code bytes expand to 32 nibbles in element order
// (unpack_nibbles32), pshufb looks up IQ4_NL's levels (-127..113), and the
// signed products go through maddubs as |v| (<= 127) times q8 carrying v's sign
// (|q8| <= 127: a pair is at most 2 * 127 * 127 = 32258, no int16 saturation);
// madd_epi16 with the scale in both halves of each int32 lane adds a pair
// times the scale (|.| <= 32 * 32258) into int32. |isum| < 2^28.
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"
#include "kernels/x86/prefetch.h"

namespace les::kernels::avx2 {
namespace {

using x86::prefetch_ahead;  // the decode matvec's prefetch (x86/prefetch.h)

inline const block_q8_K& xblock(const uint8_t* x, size_t x_stride, int t, int64_t b) {
  return reinterpret_cast<const block_q8_K*>(x + static_cast<size_t>(t) * x_stride)[b];
}

// The 8 sub-block scales ls_j - 32 of a block, lane j holding the int16 pair
// (s_j, s_j): the multiplier madd_epi16 applies to both halves of a pair sum.
inline __m256i scale_pairs(const block_iq4_xs& b) {
  const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int32_t>(load_u32(b.scales_l))),
                                                        _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                                      _mm256_set1_epi32(0x0F));
  const __m256i hi = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(b.scales_h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
  const __m256i s = _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));
  return _mm256_or_si256(_mm256_and_si256(s, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(s, 16));
}

// One weight row against NX activation rows; NX = 1 is the vec_dot. The codes
// of each sub-block are looked up once and met by every row; each row's isum
// and float steps are those of NX = 1.
template <int NX>
void dot_rows(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  const block_iq4_xs* w = static_cast<const block_iq4_xs*>(vw);
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues)));
  float acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    if constexpr (NX == 1) prefetch_ahead(w + b);
    const __m256i sp = scale_pairs(w[b]);
    __m256i isum[NX];
    for (int t = 0; t < NX; ++t) isum[t] = _mm256_setzero_si256();
    for (int j = 0; j < kQKK / 32; ++j) {
      const __m256i v = _mm256_shuffle_epi8(table, unpack_nibbles32(w[b].qs + 16 * j));
      const __m256i av = _mm256_sign_epi8(v, v);
      const __m256i sc = _mm256_permutevar8x32_epi32(sp, _mm256_set1_epi32(j));
      for (int t = 0; t < NX; ++t) {
        const __m256i p = _mm256_maddubs_epi16(av, _mm256_sign_epi8(loadu(xblock(x, x_stride, t, b).qs + 32 * j), v));
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, sc));
      }
    }
    const float dw = f16(w[b].d);
    for (int t = 0; t < NX; ++t) {
      const float d = xblock(x, x_stride, t, b).d * dw;
      const float term = static_cast<float>(hsum_epi32(isum[t])) * d;
      acc[t] += term;
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = acc[t];
}

// The 32 signed levels of a 16-byte nibble array (unpack_nibbles32 order) as 4 x 8 floats to y.
inline void store_levels(__m256i table, const uint8_t* qs, __m256 scale, float* y) {
  const __m256i v = _mm256_shuffle_epi8(table, unpack_nibbles32(qs));
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
  for (int k = 0; k < 4; ++k)
    _mm256_storeu_ps(y + 8 * k, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(parts[k]))));
}

}  // namespace

void dequantize_row_iq4_xs(const void* vx, float* y, int64_t n) {
  const block_iq4_xs* x = static_cast<const block_iq4_xs*>(vx);
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues)));
  for (int64_t b = 0; b < n / kQKK; ++b, y += kQKK) {
    const float d = f16(x[b].d);
    const uint32_t sl = load_u32(x[b].scales_l);
    const uint32_t sh = x[b].scales_h;
    for (int j = 0; j < kQKK / 32; ++j) {
      const int ls = static_cast<int>(((sl >> (4 * j)) & 0x0F) | (((sh >> (2 * j)) & 3) << 4));
      const float dl = d * static_cast<float>(ls - 32);
      store_levels(table, x[b].qs + 16 * j, _mm256_set1_ps(dl), y + 32 * j);
    }
  }
}

void dequantize_row_mxfp4(const void* vx, float* y, int64_t n) {
  const block_mxfp4* x = static_cast<const block_mxfp4*>(vx);
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMXFP4Values)));
  for (int64_t b = 0; b < n / kQKMXFP4; ++b, y += kQKMXFP4)
    store_levels(table, x[b].qs, _mm256_set1_ps(e8m0_half_to_fp32(x[b].e)), y);
}

void vec_dot_iq4_xs_q8_K(int64_t n, float* s, const void* w, const void* x) { dot_rows<1>(n, s, 1, w, x, 0); }

void vec_dot_multi_iq4_xs_q8_K(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                               int nx) {
  switch (nx) {
    case 1: dot_rows<1>(n, s, s_stride, w, x, x_stride); break;
    case 2: dot_rows<2>(n, s, s_stride, w, x, x_stride); break;
    case 3: dot_rows<3>(n, s, s_stride, w, x, x_stride); break;
    default: dot_rows<4>(n, s, s_stride, w, x, x_stride); break;
  }
}

}  // namespace les::kernels::avx2
