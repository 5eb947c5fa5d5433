// AVX2 scale-search kernels (FitKernels, kernels.h), bit-identical to the
// scalar reference (ref_quant_fit.cpp): the codes are rounded with the same
// add-and-subtract of 1.5 * 2^23 (so even the sign of a zero matches), every
// term is formed in double with separate multiplies and adds (never an FMA),
// lanes 0-3 and 4-7 of the contract live in two __m256d accumulators, and
// the final combination follows the contract's order.
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"

namespace les::kernels::avx2 {
namespace {

constexpr int kMaxGroups = 32;  // n <= 256

// The contract's lane combination of lanes lo = {l0..l3}, hi = {l4..l7}:
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
inline double combine(__m256d lo, __m256d hi) {
  const __m256d t = _mm256_add_pd(lo, hi);  // l0+l4, l1+l5, l2+l6, l3+l7
  const __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
  return _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
}

// fit::clamp_round on 8 lanes.
inline __m256 clamp_round(__m256 v, __m256 lo, __m256 hi, __m256 lo1, __m256 hi1) {
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  // Scalar: v < lo - 1 ? lo - 1 : (v > hi + 1 ? hi + 1 : v), then the same on lo/hi after rounding.
  v = _mm256_blendv_ps(v, hi1, _mm256_cmp_ps(v, hi1, _CMP_GT_OQ));
  v = _mm256_blendv_ps(v, lo1, _mm256_cmp_ps(v, lo1, _CMP_LT_OQ));
  __m256 r = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
  r = _mm256_blendv_ps(r, hi, _mm256_cmp_ps(r, hi, _CMP_GT_OQ));
  return _mm256_blendv_ps(r, lo, _mm256_cmp_ps(r, lo, _CMP_LT_OQ));
}

inline __m256d lo_pd(__m256 v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
inline __m256d hi_pd(__m256 v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }

// Per group of 8: x, and w and w * x in double (lanes 0-3 / 4-7).
struct Group {
  __m256 x;
  __m256d w_lo, w_hi, wx_lo, wx_hi;
};

int load_groups(const float* x, const float* w, int n, Group* g) {
  const int ng = n / 8;
  for (int k = 0; k < ng; ++k) {
    g[k].x = _mm256_loadu_ps(x + 8 * k);
    const __m256 w8 = w ? _mm256_loadu_ps(w + 8 * k) : _mm256_set1_ps(1.0f);
    g[k].w_lo = lo_pd(w8);
    g[k].w_hi = hi_pd(w8);
    g[k].wx_lo = _mm256_mul_pd(g[k].w_lo, lo_pd(g[k].x));
    g[k].wx_hi = _mm256_mul_pd(g[k].w_hi, hi_pd(g[k].x));
  }
  return ng;
}

// Adds a group's symmetric terms for codes q to the sxl / sll accumulators.
inline void add_symmetric(const Group& g, __m256 q, __m256d* a) {
  const __m256d ql = lo_pd(q), qh = hi_pd(q);
  a[0] = _mm256_add_pd(a[0], _mm256_mul_pd(g.wx_lo, ql));
  a[1] = _mm256_add_pd(a[1], _mm256_mul_pd(g.wx_hi, qh));
  a[2] = _mm256_add_pd(a[2], _mm256_mul_pd(_mm256_mul_pd(g.w_lo, ql), ql));
  a[3] = _mm256_add_pd(a[3], _mm256_mul_pd(_mm256_mul_pd(g.w_hi, qh), qh));
}

}  // namespace

void fit_eval_symmetric(const float* x, const float* w, int n, int lo, int hi, const float* s, int n_cand,
                        double* sxl, double* sll) {
  Group g[kMaxGroups];
  const int ng = load_groups(x, w, n, g);
  const float flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  const __m256 vlo = _mm256_set1_ps(flo), vhi = _mm256_set1_ps(fhi);
  const __m256 vlo1 = _mm256_set1_ps(flo - 1.0f), vhi1 = _mm256_set1_ps(fhi + 1.0f);
  for (int c = 0; c < n_cand; ++c) {
    const __m256 sv = _mm256_set1_ps(s[c]);
    __m256d a[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    for (int k = 0; k < ng; ++k) add_symmetric(g[k], clamp_round(_mm256_mul_ps(g[k].x, sv), vlo, vhi, vlo1, vhi1), a);
    sxl[c] = combine(a[0], a[1]);
    sll[c] = combine(a[2], a[3]);
  }
}

void fit_eval_symmetric_table16(const float* x, const float* w, int n, const int8_t* levels, const float* s,
                                int n_cand, double* sxl, double* sll) {
  Group g[kMaxGroups];
  const int ng = load_groups(x, w, n, g);
  __m256 mid[15];
  for (int j = 0; j < 15; ++j)
    mid[j] = _mm256_set1_ps(0.5f * (static_cast<float>(levels[j]) + static_cast<float>(levels[j + 1])));
  float tab[16];
  for (int j = 0; j < 16; ++j) tab[j] = static_cast<float>(levels[j]);
  const __m256 tab_lo = _mm256_loadu_ps(tab), tab_hi = _mm256_loadu_ps(tab + 8);
  for (int c = 0; c < n_cand; ++c) {
    const __m256 sv = _mm256_set1_ps(s[c]);
    __m256d a[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    for (int k = 0; k < ng; ++k) {
      const __m256 v = _mm256_mul_ps(g[k].x, sv);
      __m256i idx = _mm256_setzero_si256();  // minus the number of midpoints below v
      for (int j = 0; j < 15; ++j)
        idx = _mm256_add_epi32(idx, _mm256_castps_si256(_mm256_cmp_ps(mid[j], v, _CMP_LT_OQ)));
      idx = _mm256_sub_epi32(_mm256_setzero_si256(), idx);
      const __m256 from_lo = _mm256_permutevar8x32_ps(tab_lo, idx);
      const __m256 from_hi = _mm256_permutevar8x32_ps(tab_hi, idx);  // uses idx & 7
      const __m256 high = _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7)));
      add_symmetric(g[k], _mm256_blendv_ps(from_lo, from_hi, high), a);
    }
    sxl[c] = combine(a[0], a[1]);
    sll[c] = combine(a[2], a[3]);
  }
}

void fit_eval_affine(const float* x, const float* w, int n, float x0, int qmax, const float* s, int n_cand,
                     double* sq, double* sqq, double* sxq) {
  Group g[kMaxGroups];
  const int ng = load_groups(x, w, n, g);
  const float fmax = static_cast<float>(qmax);
  const __m256 vlo = _mm256_setzero_ps(), vhi = _mm256_set1_ps(fmax);
  const __m256 vlo1 = _mm256_set1_ps(-1.0f), vhi1 = _mm256_set1_ps(fmax + 1.0f);
  const __m256 vx0 = _mm256_set1_ps(x0);
  __m256 shifted[kMaxGroups];
  for (int k = 0; k < ng; ++k) shifted[k] = _mm256_sub_ps(g[k].x, vx0);
  for (int c = 0; c < n_cand; ++c) {
    const __m256 sv = _mm256_set1_ps(s[c]);
    __m256d a[6] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    for (int k = 0; k < ng; ++k) {
      const __m256 q = clamp_round(_mm256_mul_ps(shifted[k], sv), vlo, vhi, vlo1, vhi1);
      const __m256d ql = lo_pd(q), qh = hi_pd(q);
      const __m256d wq_lo = _mm256_mul_pd(g[k].w_lo, ql), wq_hi = _mm256_mul_pd(g[k].w_hi, qh);
      a[0] = _mm256_add_pd(a[0], wq_lo);
      a[1] = _mm256_add_pd(a[1], wq_hi);
      a[2] = _mm256_add_pd(a[2], _mm256_mul_pd(wq_lo, ql));
      a[3] = _mm256_add_pd(a[3], _mm256_mul_pd(wq_hi, qh));
      a[4] = _mm256_add_pd(a[4], _mm256_mul_pd(g[k].wx_lo, ql));
      a[5] = _mm256_add_pd(a[5], _mm256_mul_pd(g[k].wx_hi, qh));
    }
    sq[c] = combine(a[0], a[1]);
    sqq[c] = combine(a[2], a[3]);
    sxq[c] = combine(a[4], a[5]);
  }
}

}  // namespace les::kernels::avx2
