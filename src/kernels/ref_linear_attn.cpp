// Scalar references of the Gated DeltaNet OpKernels (kernels.h states each
// contract): one element at a time in the order of ggml's CPU ops on its x86
// AVX-512 build, with every fused multiply-add spelled std::fma and every
// other product on its own, so no compiler contraction can change them (FMA
// is baseline on aarch64). The SIMD tiers are checked against these bit for bit.
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "kernels/ref.h"

namespace les::kernels {

float dot_f32_ggml_ref(const float* x, const float* y, int64_t n) {
  const int64_t np = n & ~int64_t{63};
  float acc[4][16] = {};
  for (int64_t i = 0; i < np; ++i) {
    float& c = acc[(i >> 4) & 3][i & 15];
    c = std::fma(x[i], y[i], c);
  }
  for (int l = 0; l < 16; ++l) acc[0][l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
  float sum = ops::reduce_add16(acc[0]);
  for (int64_t i = np; i < n; ++i) sum = std::fma(x[i], y[i], sum);
  return sum;
}

void ssm_conv_ref(const float* x, int64_t n, int64_t channels, const float* w, int d_conv, float* out) {
  for (int64_t t = 0; t < n; ++t)
    for (int64_t c = 0; c < channels; ++c) {
      float acc = 0.0f;
      for (int j = 0; j < d_conv; ++j) acc = std::fma(x[(t + j) * channels + c], w[c * d_conv + j], acc);
      out[t * channels + c] = acc;
    }
}

void l2_norm_ref(const float* x, int64_t n, float eps, float* y) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float sq = x[i] * x[i];
    sum += static_cast<double>(sq);
  }
  const float scale = 1.0f / std::fmax(std::sqrt(static_cast<float>(sum)), eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale;
}

void rms_norm_gated_ref(const float* x, const float* w, const float* z, int64_t n, float eps, float* out) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float sq = x[i] * x[i];
    sum += static_cast<double>(sq);
  }
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float e[16];
    for (int l = 0; l < 16; ++l) e[l] = 0.0f - z[i + l];
    exp16_ref(e, e);
    for (int l = 0; l < 16; ++l) {
      const float g = z[i + l] / (1.0f + e[l]);
      const float y = x[i + l] * scale;
      out[i + l] = (y * w[i + l]) * g;
    }
  }
  for (; i < n; ++i) {
    const float g = ops::silu(z[i]);
    const float y = x[i] * scale;
    out[i] = (y * w[i]) * g;
  }
}

void delta_rule_ref(const DeltaRuleArgs& a) {
  const int64_t S = a.head_dim;
  float* s = a.state_out;
  if (a.n_tokens == 0) {
    if (a.state_in != s) std::memcpy(s, a.state_in, static_cast<size_t>(S * S) * sizeof(float));
    return;
  }
  float* delta = a.scratch;
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const float* q = a.q + t * a.qk_stride;
    const float* k = a.k + t * a.qk_stride;
    const float* v = a.v + t * a.v_stride;
    const float decay = a.decay[t * a.gate_stride], beta = a.beta[t * a.gate_stride];
    const float* src = t == 0 ? a.state_in : s;
    for (int64_t i = 0; i < S * S; ++i) s[i] = src[i] * decay;
    for (int64_t j = 0; j < S; ++j) delta[j] = (v[j] - dot_f32_ggml_ref(s + j * S, k, S)) * beta;
    for (int64_t j = 0; j < S; ++j)
      for (int64_t i = 0; i < S; ++i) s[j * S + i] = std::fma(k[i], delta[j], s[j * S + i]);
    if (a.out != nullptr)
      for (int64_t j = 0; j < S; ++j) a.out[t * a.out_stride + j] = dot_f32_ggml_ref(s + j * S, q, S) * a.scale;
  }
}

}  // namespace les::kernels
