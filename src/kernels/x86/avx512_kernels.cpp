// AVX-512 kernels: F16, Q8_0, Q4_0 and Q5_0 (against Q8_0, using VNNI
// vpdpbusd) and the K-quants Q3_K, Q4_K, Q5_K, Q6_K (against Q8_K).
//
// Same integer formulation as the AVX2 tier (avx2_kquants.cpp): codes as
// unsigned bytes, signed offsets folded back through Q8_K's bsums (K-quants)
// or through a second vpdpbusd with the constant offset (Q4_0, Q5_0), so every
// block's int32 sums are exactly the reference's. 512-bit vectors cover 64
// bytes: two 32-element blocks, or four 16-element K-quant sub-blocks whose
// scales are spread over the int16 lanes with vpermw.
// GCC 12's AVX-512 intrinsics (cvtph_ps, inserti64x4, cvtepi32_ps, ...) use
// _mm512_undefined_*() internally and trip -Wuninitialized at every inlining
// site (GCC bug 105593, fixed in GCC 13); the warning is false, so silence it here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "kernels/block_formats.h"
#include "kernels/x86/avx512_kernels.h"
#include "kernels/x86/kquant_scales.h"

namespace les::kernels::avx512 {
namespace {

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

// Pair index: lanes 0..15 take element base, lanes 16..31 element base + 1.
inline __m512i pair_index(int base) { return halves_epi16(base, base + 1); }

inline float hsum256_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// a (int8, no -128) times b (int8), summed in groups of 4 into int32 (VNNI):
// |a| as unsigned bytes against b with a's sign applied.
inline __m512i dot_s8s8(__m512i a, __m512i b) {
  const __mmask64 neg = _mm512_movepi8_mask(a);
  const __m512i sb = _mm512_mask_sub_epi8(b, neg, _mm512_setzero_si512(), b);
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(a), sb);
}
inline __m256i dot_s8s8(__m256i a, __m256i b) {
  const __mmask32 neg = _mm256_movepi8_mask(a);
  const __m256i sb = _mm256_mask_sub_epi8(b, neg, _mm256_setzero_si256(), b);
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(a), sb);
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

}  // namespace

void vec_dot_f16(int64_t n, float* s, const void* w, const void* x) {
  const fp16_t* a = static_cast<const fp16_t*>(w);
  const fp16_t* b = static_cast<const fp16_t*>(x);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int k = 0; k < 4; ++k) {
      const __m512 va = _mm512_cvtph_ps(loadu256(a + i + 16 * k));
      const __m512 vb = _mm512_cvtph_ps(loadu256(b + i + 16 * k));
      acc[k] = _mm512_fmadd_ps(va, vb, acc[k]);
    }
  }
  for (; i + 16 <= n; i += 16) {
    acc[0] = _mm512_fmadd_ps(_mm512_cvtph_ps(loadu256(a + i)), _mm512_cvtph_ps(loadu256(b + i)), acc[0]);
  }
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += f16(a[i]) * f16(b[i]);
  *s = sum;
}

// The float part follows ggml's x86 kernels (ggml_vec_dot_q8_0_q8_0 and
// llamafile's tinyBLAS_Q0_AVX, which llama.cpp runs on AVX-512 machines too):
// one 8-lane accumulator, acc = fma(dw * dx, isum, acc) block after block, then
// the 8 lanes summed as hsum256_ps. The integer sums of two blocks are formed
// in one 512-bit vpdpbusd, but the blocks are accumulated in order, so the
// result is bit-identical to the AVX2 tier (a Q8_0 model's every matmul input
// is re-quantised, so a 1-ulp difference here can flip an 8-bit code).
void vec_dot_q8_0_q8_0(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q8_0* w = static_cast<const block_q8_0*>(vw);
  const block_q8_0* x = static_cast<const block_q8_0*>(vx);
  const int64_t nb = n / 32;
  __m256 acc = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    const __m512 isum =
        _mm512_cvtepi32_ps(dot_s8s8(load2x256(w[b].qs, w[b + 1].qs), load2x256(x[b].qs, x[b + 1].qs)));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(w[b].d) * f16(x[b].d)), _mm512_castps512_ps256(isum), acc);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(w[b + 1].d) * f16(x[b + 1].d)), _mm512_extractf32x8_ps(isum, 1), acc);
  }
  if (b < nb) {
    const __m256i isum = dot_s8s8(loadu256(w[b].qs), loadu256(x[b].qs));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(w[b].d) * f16(x[b].d)), _mm256_cvtepi32_ps(isum), acc);
  }
  *s = hsum256_ps(acc);
}

void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* vw, const void* vx) {
  // code = nibble - 8: sum (u - 8) * y = dpbusd(u, y) - dpbusd(8, y).
  const block_q4_0* w = static_cast<const block_q4_0*>(vw);
  const block_q8_0* x = static_cast<const block_q8_0*>(vx);
  const int64_t nb = n / 32;
  const __m512i eight = _mm512_set1_epi8(8);
  __m512 acc = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    const __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(nibbles32(w[b].qs)), nibbles32(w[b + 1].qs), 1);
    const __m512i y = load2x256(x[b].qs, x[b + 1].qs);
    const __m512i pos = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y);
    const __m512i off = _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, y);
    const __m512 d = halves_ps(f16(w[b].d) * f16(x[b].d), f16(w[b + 1].d) * f16(x[b + 1].d));
    acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(pos, off)), acc);
  }
  float sum = _mm512_reduce_add_ps(acc);
  if (b < nb) {
    const __m256i y = loadu256(x[b].qs);
    const __m256i pos = _mm256_dpbusd_epi32(_mm256_setzero_si256(), nibbles32(w[b].qs), y);
    const __m256i off = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(8), y);
    sum += hsum256_ps(_mm256_mul_ps(_mm256_set1_ps(f16(w[b].d) * f16(x[b].d)),
                                    _mm256_cvtepi32_ps(_mm256_sub_epi32(pos, off))));
  }
  *s = sum;
}

void vec_dot_q4_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q4_K* w = static_cast<const block_q4_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i shift_0_4 = halves_epi16(0, 4);  // low nibbles for bytes 0..31, high for 32..63
  const __m512i idx[4] = {pair_index(0), pair_index(2), pair_index(4), pair_index(6)};
  __m512 acc = _mm512_setzero_ps();
  __m256 acc_m = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint64_t sc64, m64;
    x86::k4_scales_mins(w[b].scales, sc64, m64);
    const __m512i sc16 = _mm512_zextsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc64))));
    const __m256i mins = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(m64)));
    const __m256i msum = _mm256_madd_epi16(loadu256(x[b].bsums), _mm256_or_si256(mins, _mm256_slli_epi32(mins, 16)));
    __m512i isum = _mm512_setzero_si512();
    for (int j = 0; j < 4; ++j) {
      // 64 elements 64j..64j+63: the 32 bytes of chunk j, low nibbles then high.
      const __m512i u = _mm512_and_si512(_mm512_srlv_epi16(bcast256(w[b].qs + 32 * j), shift_0_4), low4);
      const __m512i p = _mm512_maddubs_epi16(u, loadu512(x[b].qs + 64 * j));
      isum = _mm512_add_epi32(isum, _mm512_madd_epi16(p, _mm512_permutexvar_epi16(idx[j], sc16)));
    }
    const float d = x[b].d * f16(w[b].d);
    const float dmin = x[b].d * f16(w[b].dmin);
    acc = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(isum), acc);
    acc_m = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(msum), acc_m);
  }
  *s = _mm512_reduce_add_ps(acc) - hsum256_ps(acc_m);
}

void vec_dot_q6_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q6_K* w = static_cast<const block_q6_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i low2 = _mm512_set1_epi8(3);
  const __m512i sh01 = halves_epi16(0, 2), sh23 = halves_epi16(4, 6);
  const __m512i idx[4] = {quad_index(0), quad_index(4), quad_index(8), quad_index(12)};
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const __m256i sc16y = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales)));
    const __m512i sc16 = _mm512_zextsi256_si512(sc16y);
    // 32 * sum_j sc_j * bsum_j: the offset of code = u - 32.
    const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(loadu256(x[b].bsums), sc16y), 5);
    __m512i isum = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), corr));
    for (int h = 0; h < 2; ++h) {
      const __m512i l = loadu512(w[b].ql + 64 * h);
      const __m512i hh = bcast256(w[b].qh + 32 * h);
      const __m512i u01 = _mm512_or_si512(_mm512_and_si512(l, low4),
                                          _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(hh, sh01), low2), 4));
      const __m512i u23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), low4),
                                          _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(hh, sh23), low2), 4));
      const __m512i p01 = _mm512_maddubs_epi16(u01, loadu512(x[b].qs + 128 * h));
      const __m512i p23 = _mm512_maddubs_epi16(u23, loadu512(x[b].qs + 128 * h + 64));
      isum = _mm512_add_epi32(isum, _mm512_madd_epi16(p01, _mm512_permutexvar_epi16(idx[2 * h], sc16)));
      isum = _mm512_add_epi32(isum, _mm512_madd_epi16(p23, _mm512_permutexvar_epi16(idx[2 * h + 1], sc16)));
    }
    const float d = x[b].d * f16(w[b].d);
    acc = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(isum), acc);
  }
  *s = _mm512_reduce_add_ps(acc);
}

void vec_dot_q3_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q3_K* w = static_cast<const block_q3_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m512i low2 = _mm512_set1_epi8(3);
  const __m512i one = _mm512_set1_epi8(1);
  const __m512i sh01 = halves_epi16(0, 2), sh23 = halves_epi16(4, 6);
  // hmask bit of element 128 h + 32 j + l is bit 4 h + j of hmask[l].
  const __m512i hsh[4] = {halves_epi16(0, 1), halves_epi16(2, 3), halves_epi16(4, 5), halves_epi16(6, 7)};
  const __m512i idx[4] = {quad_index(0), quad_index(4), quad_index(8), quad_index(12)};
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint64_t lo64, hi64;
    x86::q3_K_scales(w[b].scales, lo64, hi64);
    const __m128i S = _mm_sub_epi8(_mm_set_epi64x(static_cast<int64_t>(hi64), static_cast<int64_t>(lo64)), _mm_set1_epi8(32));
    const __m256i sc16y = _mm256_cvtepi8_epi16(S);
    const __m512i sc16 = _mm512_zextsi256_si512(sc16y);
    // 4 * sum_j sc_j * bsum_j: the offset of code = u - 4.
    const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(loadu256(x[b].bsums), sc16y), 2);
    __m512i isum = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), corr));
    const __m512i hm = bcast256(w[b].hmask);
    for (int h = 0; h < 2; ++h) {
      const __m512i q = bcast256(w[b].qs + 32 * h);
      for (int pr = 0; pr < 2; ++pr) {  // element pairs (j = 2 pr, 2 pr + 1)
        const __m512i low = _mm512_and_si512(_mm512_srlv_epi16(q, pr == 0 ? sh01 : sh23), low2);
        const __m512i hb = _mm512_and_si512(_mm512_srlv_epi16(hm, hsh[2 * h + pr]), one);
        const __m512i u = _mm512_or_si512(low, _mm512_slli_epi16(hb, 2));
        const __m512i p = _mm512_maddubs_epi16(u, loadu512(x[b].qs + 128 * h + 64 * pr));
        isum = _mm512_add_epi32(isum, _mm512_madd_epi16(p, _mm512_permutexvar_epi16(idx[2 * h + pr], sc16)));
      }
    }
    const float d = x[b].d * f16(w[b].d);
    acc = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(isum), acc);
  }
  *s = _mm512_reduce_add_ps(acc);
}

void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* vw, const void* vx) {
  // u = nibble + 16 * bit (0..31), code = u - 16: sum code * y = dpbusd(u, y) - dpbusd(16, y).
  // The 32 qh bits of a block are directly a byte mask (AVX512BW).
  const block_q5_0* w = static_cast<const block_q5_0*>(vw);
  const block_q8_0* x = static_cast<const block_q8_0*>(vx);
  const int64_t nb = n / 32;
  const __m512i sixteen = _mm512_set1_epi8(16);
  __m512 acc = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    uint32_t h0, h1;
    std::memcpy(&h0, w[b].qh, 4);
    std::memcpy(&h1, w[b + 1].qh, 4);
    const __mmask64 hk = static_cast<__mmask64>(h0) | (static_cast<__mmask64>(h1) << 32);
    const __m512i nib = _mm512_inserti64x4(_mm512_castsi256_si512(nibbles32(w[b].qs)), nibbles32(w[b + 1].qs), 1);
    const __m512i u = _mm512_mask_add_epi8(nib, hk, nib, sixteen);
    const __m512i y = load2x256(x[b].qs, x[b + 1].qs);
    const __m512i pos = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y);
    const __m512i off = _mm512_dpbusd_epi32(_mm512_setzero_si512(), sixteen, y);
    const __m512 d = halves_ps(f16(w[b].d) * f16(x[b].d), f16(w[b + 1].d) * f16(x[b + 1].d));
    acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(pos, off)), acc);
  }
  float sum = _mm512_reduce_add_ps(acc);
  if (b < nb) {
    uint32_t h0;
    std::memcpy(&h0, w[b].qh, 4);
    const __m256i nib = nibbles32(w[b].qs);
    const __m256i u = _mm256_mask_add_epi8(nib, static_cast<__mmask32>(h0), nib, _mm256_set1_epi8(16));
    const __m256i y = loadu256(x[b].qs);
    const __m256i pos = _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, y);
    const __m256i off = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(16), y);
    sum += hsum256_ps(_mm256_mul_ps(_mm256_set1_ps(f16(w[b].d) * f16(x[b].d)),
                                    _mm256_cvtepi32_ps(_mm256_sub_epi32(pos, off))));
  }
  *s = sum;
}

void vec_dot_q5_K_q8_K(int64_t n, float* s, const void* vw, const void* vx) {
  const block_q5_K* w = static_cast<const block_q5_K*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i one = _mm512_set1_epi8(1);
  const __m512i shift_0_4 = halves_epi16(0, 4);
  // qh bit of element 64 j + l is bit 2 j of qh[l % 32] (first 32) or 2 j + 1 (next 32).
  const __m512i hshift[4] = {halves_epi16(0, 1), halves_epi16(2, 3), halves_epi16(4, 5), halves_epi16(6, 7)};
  const __m512i idx[4] = {pair_index(0), pair_index(2), pair_index(4), pair_index(6)};
  __m512 acc = _mm512_setzero_ps();
  __m256 acc_m = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint64_t sc64, m64;
    x86::k4_scales_mins(w[b].scales, sc64, m64);
    const __m512i sc16 = _mm512_zextsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc64))));
    const __m256i mins = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(m64)));
    const __m256i msum = _mm256_madd_epi16(loadu256(x[b].bsums), _mm256_or_si256(mins, _mm256_slli_epi32(mins, 16)));
    const __m512i qh = bcast256(w[b].qh);
    __m512i isum = _mm512_setzero_si512();
    for (int j = 0; j < 4; ++j) {
      const __m512i lo4 = _mm512_and_si512(_mm512_srlv_epi16(bcast256(w[b].qs + 32 * j), shift_0_4), low4);
      const __m512i hb = _mm512_and_si512(_mm512_srlv_epi16(qh, hshift[j]), one);
      const __m512i u = _mm512_or_si512(lo4, _mm512_slli_epi16(hb, 4));
      const __m512i p = _mm512_maddubs_epi16(u, loadu512(x[b].qs + 64 * j));
      isum = _mm512_add_epi32(isum, _mm512_madd_epi16(p, _mm512_permutexvar_epi16(idx[j], sc16)));
    }
    const float d = x[b].d * f16(w[b].d);
    const float dmin = x[b].d * f16(w[b].dmin);
    acc = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(isum), acc);
    acc_m = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(msum), acc_m);
  }
  *s = _mm512_reduce_add_ps(acc) - hsum256_ps(acc_m);
}

}  // namespace les::kernels::avx512
