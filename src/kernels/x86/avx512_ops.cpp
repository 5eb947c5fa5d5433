// AVX-512 OpKernels (kernels.h): ggml's vectorised exp and the F16 attention
// sums with one zmm register per 16-lane accumulator. Bit-identical to the
// scalar references in ref_ops.cpp: the same operations per lane in the same
// order (a fused multiply-add of two exact halves' product rounds like the
// reference's separate multiply and add, the product being exact).
// GCC 12's AVX-512 intrinsics (cvtph_ps, scalef_ps, extractf64x4) use
// _mm512_undefined_*() internally and trip -Wuninitialized (GCC bug 105593,
// fixed in GCC 13; see avx512_kernels.cpp): the warning is false.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>

#include "kernels/ops.h"
#include "kernels/x86/avx512_common.h"
#include "kernels/x86/avx512_kernels.h"

namespace les::kernels::avx512 {
namespace {

inline __mmask16 tail_mask(int64_t left) { return left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1); }

}  // namespace

void exp16(const float* xp, float* yp) {
  // ops::expf_ggml lane by lane: the same fused multiply-adds; 2^n applied by
  // scalef (exact scaling, rounded once when the result is subnormal, as ldexp).
  const __m512 x = _mm512_loadu_ps(xp);
  const __m512 shift = _mm512_set1_ps(0x1.8p23f);
  const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), shift);
  const __m512 n = _mm512_sub_ps(z, shift);
  const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f),
                                    _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
  const __m512 u = _mm512_mul_ps(b, b);
  const __m512 hi = _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f)),
                                    u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f)));
  const __m512 j = _mm512_fmadd_ps(hi, u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f)));
  __m512 r = _mm512_scalef_ps(j, n);
  const __mmask16 big = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
  if (big) {
    const __mmask16 pos = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_GT_OQ);
    r = _mm512_mask_blend_ps(big, r, _mm512_mask_blend_ps(pos, _mm512_setzero_ps(), _mm512_set1_ps(INFINITY)));
  }
  _mm512_storeu_ps(yp, r);
}

void attn_f16_kq(const float* q, const uint8_t* k, int64_t k_stride, int64_t n_kv, int head_dim, bool vec_dot,
                 float* scores) {
  const int nc = (head_dim + 15) / 16;
  for (int64_t j = 0; j < n_kv; ++j) {
    const uint8_t* kj = k + j * k_stride;
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int c = 0; c < nc; ++c) {
      const __mmask16 m = tail_mask(head_dim - 16 * c);
      const __m512 kv = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, kj + 32 * c));
      const __m512 qv = _mm512_maskz_loadu_ps(m, q + 16 * c);
      __m512& a = acc[vec_dot ? c & 3 : 0];
      a = _mm512_fmadd_ps(qv, kv, a);
    }
    if (vec_dot) acc[0] = _mm512_add_ps(_mm512_add_ps(acc[0], acc[2]), _mm512_add_ps(acc[1], acc[3]));
    scores[j] = reduce16(acc[0]);
  }
}

void attn_f16_kqv(const float* p, const uint8_t* v, int64_t v_stride, int64_t n_kv, int head_dim_v, bool vec_dot,
                  float* out, float* scratch) {
  // scratch: one row of head_dim_v (padded to 16) floats per lane index j % R,
  // R = 64 (vec_dot: lane j % 16 of accumulator (j / 16) % 4) or 16.
  const int R = vec_dot ? 64 : 16;
  const int nc = (head_dim_v + 15) / 16;
  const int64_t w = static_cast<int64_t>(nc) * 16;
  for (int64_t j = 0; j < n_kv; ++j) {
    const uint8_t* vj = v + j * v_stride;
    float* a = scratch + (j % R) * w;
    const __m512 pj = _mm512_set1_ps(p[j]);
    for (int c = 0; c < nc; ++c) {
      const __mmask16 m = tail_mask(head_dim_v - 16 * c);
      const __m512 vv = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, vj + 32 * c));
      const __m512 prev = j < R ? _mm512_setzero_ps() : _mm512_loadu_ps(a + 16 * c);
      _mm512_storeu_ps(a + 16 * c, _mm512_fmadd_ps(pj, vv, prev));
    }
  }
  for (int64_t r = n_kv; r < R; ++r)
    for (int64_t i = 0; i < w; ++i) scratch[r * w + i] = 0.0f;
  auto row = [&](int r, int c) { return _mm512_loadu_ps(scratch + r * w + 16 * c); };
  for (int c = 0; c < nc; ++c) {
    __m512 l[16];
    for (int i = 0; i < 16; ++i)
      l[i] = vec_dot ? _mm512_add_ps(_mm512_add_ps(row(i, c), row(i + 32, c)), _mm512_add_ps(row(i + 16, c), row(i + 48, c)))
                     : row(i, c);
    for (int i = 0; i < 8; ++i) l[i] = _mm512_add_ps(l[i], l[i + 8]);
    for (int i = 0; i < 4; ++i) l[i] = _mm512_add_ps(l[i], l[i + 4]);
    const __m512 s = _mm512_add_ps(_mm512_add_ps(l[0], l[2]), _mm512_add_ps(l[1], l[3]));
    _mm512_mask_storeu_ps(out + 16 * c, tail_mask(head_dim_v - 16 * c), s);
  }
}

}  // namespace les::kernels::avx512
