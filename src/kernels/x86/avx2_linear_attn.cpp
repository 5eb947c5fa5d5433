// AVX2 Gated DeltaNet OpKernels (kernels.h): every 16-lane accumulator of the
// contracts is a pair of ymm registers. Bit-identical to the scalar references
// in ref_linear_attn.cpp: each lane sees the same operations in the same order
// (fused multiply-adds where the reference has std::fma, plain products
// elsewhere); the double sums of the norms stay sequential.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"

namespace les::kernels::avx2 {
namespace {

inline V16 load16(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
inline void store16(float* p, V16 v) {
  _mm256_storeu_ps(p, v.lo);
  _mm256_storeu_ps(p + 8, v.hi);
}
inline V16 mul16(V16 a, V16 b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
inline V16 set16(float x) { return {_mm256_set1_ps(x), _mm256_set1_ps(x)}; }

// The double sum of the F32 squares of x in index order (the norms' reduction).
double sum_squares(const float* x, int64_t n) {
  double sum = 0;
  int64_t i = 0;
  alignas(32) float sq[8];
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    _mm256_store_ps(sq, _mm256_mul_ps(v, v));
    for (int l = 0; l < 8; ++l) sum += static_cast<double>(sq[l]);
  }
  for (; i < n; ++i) {
    const float s = x[i] * x[i];
    sum += static_cast<double>(s);
  }
  return sum;
}

}  // namespace

void ssm_conv(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out) {
  constexpr int kMaxTaps = 8;
  int64_t c0 = 0;
  if (d_conv <= kMaxTaps) {
    for (; c0 + 8 <= channels; c0 += 8) {
      __m256 wt[kMaxTaps];
      for (int j = 0; j < d_conv; ++j) {
        alignas(32) float tap[8];
        for (int l = 0; l < 8; ++l) tap[l] = w[(c0 + l) * d_conv + j];
        wt[j] = _mm256_load_ps(tap);
      }
      for (int64_t t = 0; t < n; ++t) {
        __m256 acc = _mm256_setzero_ps();
        for (int j = 0; j < d_conv; ++j) acc = _mm256_fmadd_ps(_mm256_loadu_ps(x + (t + j) * channels + c0), wt[j], acc);
        _mm256_storeu_ps(out + t * channels + c0, acc);
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
  const __m256 vs = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
  for (; i < n; ++i) y[i] = x[i] * scale;
}

void rms_norm_gated(const float* x, const float* w, const float* z, int64_t n, float eps, float* out) {
  const double sum = sum_squares(x, n);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  const V16 vs = set16(scale), one = set16(1.0f), zero = set16(0.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const V16 zv = load16(z + i);
    alignas(32) float e[16];
    const V16 negz = {_mm256_sub_ps(zero.lo, zv.lo), _mm256_sub_ps(zero.hi, zv.hi)};
    store16(e, negz);
    exp16(e, e);
    const V16 ev = load16(e);
    const V16 g = {_mm256_div_ps(zv.lo, _mm256_add_ps(one.lo, ev.lo)), _mm256_div_ps(zv.hi, _mm256_add_ps(one.hi, ev.hi))};
    store16(out + i, mul16(mul16(mul16(load16(x + i), vs), load16(w + i)), g));
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
    const V16 vdecay = set16(decay);
    const float* src = t == 0 ? a.state_in : s;
    // Row by row (rows never meet each other's delta): decay and dot with k,
    // then the rank-1 update and the dot with q.
    for (int64_t j = 0; j < S; ++j) {
      const float* rin = src + j * S;
      float* r = s + j * S;
      V16 acc[4] = {zero16(), zero16(), zero16(), zero16()};
      for (int64_t i = 0; i < np; i += 16) {
        const V16 x = mul16(load16(rin + i), vdecay);
        store16(r + i, x);
        acc[(i >> 4) & 3] = fma16(x, load16(k + i), acc[(i >> 4) & 3]);
      }
      float dot = reduce16(add16(add16(acc[0], acc[2]), add16(acc[1], acc[3])));
      for (int64_t i = np; i < S; ++i) {
        r[i] = rin[i] * decay;
        dot = std::fma(r[i], k[i], dot);
      }
      const float d = (v[j] - dot) * beta;
      const V16 vd = set16(d);
      V16 accq[4] = {zero16(), zero16(), zero16(), zero16()};
      for (int64_t i = 0; i < np; i += 16) {
        const V16 x = fma16(load16(k + i), vd, load16(r + i));
        store16(r + i, x);
        if (a.out) accq[(i >> 4) & 3] = fma16(x, load16(q + i), accq[(i >> 4) & 3]);
      }
      for (int64_t i = np; i < S; ++i) r[i] = std::fma(k[i], d, r[i]);
      if (a.out) {
        float oq = reduce16(add16(add16(accq[0], accq[2]), add16(accq[1], accq[3])));
        for (int64_t i = np; i < S; ++i) oq = std::fma(r[i], q[i], oq);
        a.out[t * a.out_stride + j] = oq * a.scale;
      }
    }
  }
}

}  // namespace les::kernels::avx2
