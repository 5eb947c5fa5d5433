// Built with -ffp-contract=off (cmake/LesKernels.cmake): every fused
// multiply-add below is an explicit std::fma where ggml's x86 build (GCC,
// -march=native with FMA) contracts one, and every other product and sum
// rounds on its own, on any target.
#include "kernels/rope.h"

#include <algorithm>
#include <cmath>

namespace les::ops {
namespace {

constexpr float kPi = 3.14159265358979323846f;

// ggml's rope_yarn_ramp: 1 at pair indices up to low, 0 from high on.
float yarn_ramp(float low, float high, int i) {
  const float y = (static_cast<float>(i) - low) / std::max(0.001f, high - low);
  return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

// cos and sin of pair i for the unscaled angle `theta_base` (the running
// product, before frequency factors), scaled as rope.h says.
void rope_angle(float theta_base, int i, const RopeScaling& sc, float* c, float* s) {
  const float ff = sc.freq_factors != nullptr ? sc.freq_factors[i] : 1.0f;
  const float theta_extrap = theta_base / ff;
  const float theta_interp = sc.freq_scale * theta_extrap;
  float theta = theta_interp;
  float mscale = sc.attn_factor;
  if (sc.ext_factor != 0.0f) {
    const float ramp_mix = yarn_ramp(sc.corr_dims[0], sc.corr_dims[1], i) * sc.ext_factor;
    // ggml: theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix, the first product fused.
    theta = std::fma(theta_interp, 1.0f - ramp_mix, theta_extrap * ramp_mix);
    // ggml: mscale *= 1 + 0.1 ln(1 / freq_scale), the product fused with the sum.
    mscale *= std::fma(0.1f, std::log(1.0f / sc.freq_scale), 1.0f);
  }
  *c = std::cos(theta) * mscale;
  *s = std::sin(theta) * mscale;
}

// (x0, x1) -> (x0 c - x1 s, x0 s + x1 c) with ggml's contraction (first product fused).
inline void rotate(float* xh, int a, int b, float c, float s) {
  const float x0 = xh[a], x1 = xh[b];
  xh[a] = std::fma(x0, c, -(x1 * s));
  xh[b] = std::fma(x0, s, x1 * c);
}

}  // namespace

void yarn_corr_dims(int n_rot, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]) {
  // ggml_rope_yarn_corr_dim: n_dims * logf(n_ctx_orig / (beta * 2 * pi)) / (2 * logf(base)).
  const auto corr_dim = [&](float beta) {
    return static_cast<float>(n_rot) * std::log(static_cast<float>(n_ctx_orig) / (beta * 2.0f * kPi)) /
           (2.0f * std::log(freq_base));
  };
  const float start = std::floor(corr_dim(beta_fast));
  const float end = std::ceil(corr_dim(beta_slow));
  dims[0] = std::max(0.0f, start);
  dims[1] = std::min(static_cast<float>(n_rot - 1), end);
}

float yarn_attn_factor(float freq_scale, float rope_attn_factor) {
  const float factor = 1.0f / freq_scale;
  const float l = std::log(factor);
  float a = factor <= 1.0f ? 1.0f : 0.1f * l + 1.0f;  // not fused: llama.cpp's own code has no FMA
  a *= 1.0f / (1.0f + 0.1f * l);
  return a * rope_attn_factor;
}

void rope(float* x, int n_heads, int head_dim, int n_rot, int64_t pos, const RopeScaling& sc, RopeType type) {
  const float theta_scale = std::pow(sc.freq_base, -2.0f / static_cast<float>(n_rot));
  const int half = n_rot / 2;
  float theta = static_cast<float>(pos);
  for (int i = 0; i < half; ++i) {
    float c, s;
    rope_angle(theta, i, sc, &c, &s);
    theta *= theta_scale;
    const int a = type == RopeType::neox ? i : 2 * i;
    const int b = type == RopeType::neox ? i + half : 2 * i + 1;
    // The fused multiply-adds GCC contracts ggml's rotation into (x86 build
    // with FMA): rounding each product separately flips Q8_0 activation codes
    // of later matmuls on Q8_0 models (qwen3moe-Q8_0 prompt 4 was 0.076 off).
    for (int h = 0; h < n_heads; ++h) rotate(x + static_cast<int64_t>(h) * head_dim, a, b, c, s);
  }
}

void rope_imrope(float* x, int n_heads, int head_dim, int n_rot, const int64_t pos[4], const int sections[4],
                 const RopeScaling& sc) {
  const float theta_scale = std::pow(sc.freq_base, -2.0f / static_cast<float>(n_rot));
  const int half = n_rot / 2;
  const int sect_dims = sections[0] + sections[1] + sections[2] + sections[3];
  float theta[4];
  for (int c = 0; c < 4; ++c) theta[c] = static_cast<float>(pos[c]);
  for (int i = 0; i < half; ++i) {
    const int m = i % sect_dims;
    int comp = 3;
    if (m % 3 == 1 && m < 3 * sections[1]) {
      comp = 1;
    } else if (m % 3 == 2 && m < 3 * sections[2]) {
      comp = 2;
    } else if (m % 3 == 0 && m < 3 * sections[0]) {
      comp = 0;
    }
    float c, s;
    rope_angle(theta[comp], i, sc, &c, &s);
    for (float& t : theta) t *= theta_scale;
    for (int h = 0; h < n_heads; ++h) rotate(x + static_cast<int64_t>(h) * head_dim, i, i + half, c, s);
  }
}

}  // namespace les::ops
