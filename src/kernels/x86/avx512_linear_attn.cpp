// AVX-512 Gated DeltaNet OpKernels (kernels.h): one zmm register per 16-lane
// accumulator of the contracts. Bit-identical to the scalar references in
// ref_linear_attn.cpp: each lane sees the same operations in the same order
// (fused multiply-adds where the reference has std::fma, plain products
// elsewhere); the double sums of the norms stay sequential.
// GCC 12's AVX-512 intrinsics trip a false -Wuninitialized (GCC bug 105593;
// see avx512_ops.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "kernels/x86/avx512_common.h"
#include "kernels/x86/avx512_kernels.h"

namespace les::kernels::avx512 {
namespace {

// The double sum of the F32 squares of x in index order (the norms' reduction).
double sum_squares(const float* x, int64_t n) {
  double sum = 0;
  int64_t i = 0;
  alignas(64) float sq[16];
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    _mm512_store_ps(sq, _mm512_mul_ps(v, v));
    for (int l = 0; l < 16; ++l) sum += static_cast<double>(sq[l]);
  }
  for (; i < n; ++i) {
    const float s = x[i] * x[i];
    sum += static_cast<double>(s);
  }
  return sum;
}

inline float fold_reduce(const __m512 acc[4]) {
  return reduce16(_mm512_add_ps(_mm512_add_ps(acc[0], acc[2]), _mm512_add_ps(acc[1], acc[3])));
}

}  // namespace

void ssm_conv(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out) {
  constexpr int kMaxTaps = 8;
  int64_t c0 = 0;
  if (d_conv <= kMaxTaps) {
    for (; c0 + 16 <= channels; c0 += 16) {
      __m512 wt[kMaxTaps];
      for (int j = 0; j < d_conv; ++j) {
        alignas(64) float tap[16];
        for (int l = 0; l < 16; ++l) tap[l] = w[(c0 + l) * d_conv + j];
        wt[j] = _mm512_load_ps(tap);
      }
      for (int64_t t = 0; t < n; ++t) {
        __m512 acc = _mm512_setzero_ps();
        for (int j = 0; j < d_conv; ++j) acc = _mm512_fmadd_ps(_mm512_loadu_ps(x + (t + j) * channels + c0), wt[j], acc);
        _mm512_storeu_ps(out + t * channels + c0, acc);
      }
    }
  }
  for (int64_t c = c0; c < channels; ++c)
    for (int64_t t = 0; t < n; ++t) {
      float acc = 0.0f;
      for (int j = 0; j < d_conv; ++j) acc = std::fma(x[(t + j) * channels + c], w[c * d_conv + j], acc);
      out[t * channels + c] = acc;
    }
}

void l2_norm(const float* x, int64_t n, float eps, float* y) {
  const double sum = sum_squares(x, n);
  const float scale = 1.0f / std::fmax(std::sqrt(static_cast<float>(sum)), eps);
  const __m512 vs = _mm512_set1_ps(scale);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), vs));
  for (; i < n; ++i) y[i] = x[i] * scale;
}

void rms_norm_gated(const float* x, const float* w, const float* z, int64_t n, float eps, float* out) {
  const double sum = sum_squares(x, n);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  const __m512 vs = _mm512_set1_ps(scale), one = _mm512_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 zv = _mm512_loadu_ps(z + i);
    alignas(64) float e[16];
    _mm512_store_ps(e, _mm512_sub_ps(_mm512_setzero_ps(), zv));
    exp16(e, e);
    const __m512 g = _mm512_div_ps(zv, _mm512_add_ps(one, _mm512_load_ps(e)));
    const __m512 y = _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), vs), _mm512_loadu_ps(w + i));
    _mm512_storeu_ps(out + i, _mm512_mul_ps(y, g));
  }
  for (; i < n; ++i) {
    const float g = ops::silu(z[i]);
    const float y = x[i] * scale;
    out[i] = (y * w[i]) * g;
  }
}

void delta_rule(const DeltaRuleArgs& a) {
  const int64_t S = a.head_dim;
  float* s = a.state_out;
  if (a.n_tokens == 0) {
    if (a.state_in != s) std::memcpy(s, a.state_in, static_cast<size_t>(S * S) * sizeof(float));
    return;
  }
  const int64_t np = S & ~int64_t{63};
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const float* q = a.q + t * a.qk_stride;
    const float* k = a.k + t * a.qk_stride;
    const float* v = a.v + t * a.v_stride;
    const float decay = a.decay[t * a.gate_stride], beta = a.beta[t * a.gate_stride];
    const __m512 vdecay = _mm512_set1_ps(decay);
    const float* src = t == 0 ? a.state_in : s;
    // Row by row (rows never meet each other's delta): decay and dot with k,
    // then the rank-1 update and the dot with q.
    for (int64_t j = 0; j < S; ++j) {
      const float* rin = src + j * S;
      float* r = s + j * S;
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
      for (int64_t i = 0; i < np; i += 16) {
        const __m512 x = _mm512_mul_ps(_mm512_loadu_ps(rin + i), vdecay);
        _mm512_storeu_ps(r + i, x);
        acc[(i >> 4) & 3] = _mm512_fmadd_ps(x, _mm512_loadu_ps(k + i), acc[(i >> 4) & 3]);
      }
      float dot = fold_reduce(acc);
      for (int64_t i = np; i < S; ++i) {
        r[i] = rin[i] * decay;
        dot = std::fma(r[i], k[i], dot);
      }
      const float d = (v[j] - dot) * beta;
      const __m512 vd = _mm512_set1_ps(d);
      __m512 accq[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
      for (int64_t i = 0; i < np; i += 16) {
        const __m512 x = _mm512_fmadd_ps(_mm512_loadu_ps(k + i), vd, _mm512_loadu_ps(r + i));
        _mm512_storeu_ps(r + i, x);
        if (a.out) accq[(i >> 4) & 3] = _mm512_fmadd_ps(x, _mm512_loadu_ps(q + i), accq[(i >> 4) & 3]);
      }
      for (int64_t i = np; i < S; ++i) r[i] = std::fma(k[i], d, r[i]);
      if (a.out) {
        float oq = fold_reduce(accq);
        for (int64_t i = np; i < S; ++i) oq = std::fma(r[i], q[i], oq);
        a.out[t * a.out_stride + j] = oq * a.scale;
      }
    }
  }
}

}  // namespace les::kernels::avx512
