// NEON Gated DeltaNet OpKernels (kernels.h): every 16-lane accumulator of the
// contracts is four float32x4 registers (lanes 0-3, 4-7, 8-11, 12-15).
// Bit-identical to the scalar references in ref_linear_attn.cpp: each lane
// sees the same operations in the same order (FMLA where the reference has
// std::fma, plain products elsewhere); the double sums of the norms stay
// sequential, and the 16-lane exp is the scalar expf_ggml (this tier has no
// vector exp).
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "kernels/arm/neon_kernels.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace les::kernels {
namespace {

struct V16 {
  float32x4_t v[4];
};

inline V16 zero16() { return {{vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}}; }
inline V16 set16(float x) { return {{vdupq_n_f32(x), vdupq_n_f32(x), vdupq_n_f32(x), vdupq_n_f32(x)}}; }
inline V16 load16(const float* p) { return {{vld1q_f32(p), vld1q_f32(p + 4), vld1q_f32(p + 8), vld1q_f32(p + 12)}}; }
inline void store16(float* p, V16 a) {
  for (int i = 0; i < 4; ++i) vst1q_f32(p + 4 * i, a.v[i]);
}
inline V16 mul16(V16 a, V16 b) {
  V16 r;
  for (int i = 0; i < 4; ++i) r.v[i] = vmulq_f32(a.v[i], b.v[i]);
  return r;
}
inline V16 add16(V16 a, V16 b) {
  V16 r;
  for (int i = 0; i < 4; ++i) r.v[i] = vaddq_f32(a.v[i], b.v[i]);
  return r;
}
// a * b + c, fused.
inline V16 fma16(V16 a, V16 b, V16 c) {
  V16 r;
  for (int i = 0; i < 4; ++i) r.v[i] = vfmaq_f32(c.v[i], a.v[i], b.v[i]);
  return r;
}
// ops::reduce_add16's order: l[i] + l[i+8], then + [i+4], then (0+2) + (1+3).
inline float reduce16(V16 a) {
  const float32x4_t c = vaddq_f32(vaddq_f32(a.v[0], a.v[2]), vaddq_f32(a.v[1], a.v[3]));
  return (vgetq_lane_f32(c, 0) + vgetq_lane_f32(c, 2)) + (vgetq_lane_f32(c, 1) + vgetq_lane_f32(c, 3));
}
inline float fold_reduce(const V16 acc[4]) { return reduce16(add16(add16(acc[0], acc[2]), add16(acc[1], acc[3]))); }

// The double sum of the F32 squares of x in index order (the norms' reduction).
double sum_squares(const float* x, int64_t n) {
  double sum = 0;
  int64_t i = 0;
  float sq[4];
  for (; i + 4 <= n; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    vst1q_f32(sq, vmulq_f32(v, v));
    for (int l = 0; l < 4; ++l) sum += static_cast<double>(sq[l]);
  }
  for (; i < n; ++i) {
    const float s = x[i] * x[i];
    sum += static_cast<double>(s);
  }
  return sum;
}

}  // namespace

void ssm_conv_neon(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out) {
  constexpr int kMaxTaps = 8;
  int64_t c0 = 0;
  if (d_conv <= kMaxTaps) {
    for (; c0 + 4 <= channels; c0 += 4) {
      float32x4_t wt[kMaxTaps];
      for (int j = 0; j < d_conv; ++j) {
        float tap[4];
        for (int l = 0; l < 4; ++l) tap[l] = w[(c0 + l) * d_conv + j];
        wt[j] = vld1q_f32(tap);
      }
      for (int64_t t = 0; t < n; ++t) {
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int j = 0; j < d_conv; ++j) acc = vfmaq_f32(acc, vld1q_f32(x + (t + j) * channels + c0), wt[j]);
        vst1q_f32(out + t * channels + c0, acc);
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

void l2_norm_neon(const float* x, int64_t n, float eps, float* y) {
  const double sum = sum_squares(x, n);
  const float scale = 1.0f / std::fmax(std::sqrt(static_cast<float>(sum)), eps);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_n_f32(vld1q_f32(x + i), scale));
  for (; i < n; ++i) y[i] = x[i] * scale;
}

void rms_norm_gated_neon(const float* x, const float* w, const float* z, int64_t n, float eps, float* out) {
  const double sum = sum_squares(x, n);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  const V16 vs = set16(scale), one = set16(1.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float e[16];
    for (int l = 0; l < 16; ++l) e[l] = ops::expf_ggml(0.0f - z[i + l]);
    const V16 zv = load16(z + i), den = add16(one, load16(e));
    V16 g;
    for (int l = 0; l < 4; ++l) g.v[l] = vdivq_f32(zv.v[l], den.v[l]);
    store16(out + i, mul16(mul16(mul16(load16(x + i), vs), load16(w + i)), g));
  }
  for (; i < n; ++i) {
    const float g = ops::silu(z[i]);
    const float y = x[i] * scale;
    out[i] = (y * w[i]) * g;
  }
}

void delta_rule_neon(const DeltaRuleArgs& a) {
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
      float dot = fold_reduce(acc);
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
        float oq = fold_reduce(accq);
        for (int64_t i = np; i < S; ++i) oq = std::fma(r[i], q[i], oq);
        a.out[t * a.out_stride + j] = oq * a.scale;
      }
    }
  }
}

}  // namespace les::kernels
