// RoPE frequency scaling (kernels/rope.h) against an independent double
// implementation of the published formulas: linear position interpolation
// (theta / factor), YaRN as Hugging Face transformers computes it
// (_compute_yarn_parameters: correction range from beta_fast / beta_slow, a
// linear ramp mixing interpolated and extrapolated inverse frequencies, cos
// and sin scaled by 0.1 ln(factor) + 1), and Llama 3's frequency factors
// (theta / ff). Unscaled RoPE stays bit-identical to the plain formula LES
// used before scaling existed.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/rope.h"

using namespace les;

namespace {

std::vector<float> randn(std::mt19937& rng, size_t n) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct YarnRef {
  double factor = 1;          // 1 = no scaling
  bool yarn = false;
  int n_ctx_orig = 0;
  double beta_fast = 32, beta_slow = 1;
  const float* ff = nullptr;  // frequency factors
};

// HF's find_correction_dim / find_correction_range (double).
double corr_dim(int dim, int n_ctx_orig, double beta, double base) {
  return dim * std::log(n_ctx_orig / (beta * 2 * M_PI)) / (2 * std::log(base));
}

// The rotated heads in double: inverse frequency of pair i, YaRN-mixed, and
// the magnitude mscale on cos and sin.
std::vector<double> reference(const std::vector<float>& x, int n_heads, int head_dim, int n_rot, int64_t pos,
                              double base, bool neox, const YarnRef& y) {
  std::vector<double> out(x.begin(), x.end());
  const int half = n_rot / 2;
  double low = 0, high = 0;
  if (y.yarn) {
    low = std::max(0.0, std::floor(corr_dim(n_rot, y.n_ctx_orig, y.beta_fast, base)));
    high = std::min(static_cast<double>(n_rot - 1), std::ceil(corr_dim(n_rot, y.n_ctx_orig, y.beta_slow, base)));
    if (low == high) high += 0.001;
  }
  const double mscale = y.yarn && y.factor > 1 ? 0.1 * std::log(y.factor) + 1 : 1.0;
  for (int i = 0; i < half; ++i) {
    double inv_extrap = std::pow(base, -2.0 * i / n_rot);
    if (y.ff) inv_extrap /= y.ff[i];
    const double inv_interp = inv_extrap / y.factor;
    double inv = inv_interp;
    if (y.yarn) {
      const double ramp = std::min(1.0, std::max(0.0, (i - low) / (high - low)));
      const double extrap_mask = 1 - ramp;  // 1 for the fast (low i) pairs: keep extrapolated
      inv = inv_interp * (1 - extrap_mask) + inv_extrap * extrap_mask;
    }
    const double th = static_cast<double>(pos) * inv;
    const double c = std::cos(th) * mscale, s = std::sin(th) * mscale;
    const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    for (int h = 0; h < n_heads; ++h) {
      const double x0 = x[static_cast<size_t>(h * head_dim + a)], x1 = x[static_cast<size_t>(h * head_dim + b)];
      out[static_cast<size_t>(h * head_dim + a)] = x0 * c - x1 * s;
      out[static_cast<size_t>(h * head_dim + b)] = x0 * s + x1 * c;
    }
  }
  return out;
}

// Max |ours - ref| relative to the angle's magnitude: theta = pos * inv_freq
// is a running float product in ggml (and LES), whose error grows with the
// pair index and the position: bound it by pos * 2^-20 (about 8 ulps of a
// float angle summed over up to 64 products), plus float rounding of x.
void check_close(const std::vector<float>& ours, const std::vector<double>& ref, int64_t pos) {
  const double tol = 1e-5 + static_cast<double>(pos) * std::ldexp(1.0, -20) * 4.0;
  double worst = 0;
  for (size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::fabs(ours[i] - ref[i]));
  INFO("pos " << pos << " max error " << worst << " tolerance " << tol);
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("rope: unscaled RoPE equals the formula on NORM and NEOX pairs; dims past n_rot pass through", "[rope]") {
  std::mt19937 rng(3);
  const int n_heads = 3, head_dim = 64, n_rot = 48;
  const auto x = randn(rng, static_cast<size_t>(n_heads * head_dim));
  for (auto type : {ops::RopeType::norm, ops::RopeType::neox})
    for (int64_t pos : {0, 1, 17, 1000}) {
      std::vector<float> a(x);
      ops::rope(a.data(), n_heads, head_dim, n_rot, pos, ops::RopeScaling::plain(10000.0f), type);
      check_close(a, reference(x, n_heads, head_dim, n_rot, pos, 10000.0, type == ops::RopeType::neox, {}), pos);
      for (int h = 0; h < n_heads; ++h)
        for (int d = n_rot; d < head_dim; ++d)
          CHECK(a[static_cast<size_t>(h * head_dim + d)] == x[static_cast<size_t>(h * head_dim + d)]);
    }
}

TEST_CASE("rope: linear scaling divides every angle by the factor", "[rope]") {
  std::mt19937 rng(4);
  const int n_heads = 2, head_dim = 128, n_rot = 128;
  const auto x = randn(rng, static_cast<size_t>(n_heads * head_dim));
  ops::RopeScaling sc = ops::RopeScaling::plain(500000.0f);
  sc.freq_scale = 1.0f / 8.0f;
  YarnRef y;
  y.factor = 8;
  for (int64_t pos : {1, 100, 4000}) {
    std::vector<float> a(x);
    ops::rope(a.data(), n_heads, head_dim, n_rot, pos, sc, ops::RopeType::neox);
    check_close(a, reference(x, n_heads, head_dim, n_rot, pos, 500000.0, true, y), pos);
    std::vector<float> plain(x);
    ops::rope(plain.data(), n_heads, head_dim, n_rot, pos, ops::RopeScaling::plain(500000.0f), ops::RopeType::neox);
    CHECK(std::memcmp(plain.data(), a.data(), a.size() * sizeof(float)) != 0);
  }
}

TEST_CASE("rope: YaRN matches the transformers formula (ramp between the beta dims, magnitude 0.1 ln s + 1)",
          "[rope]") {
  std::mt19937 rng(5);
  const int n_heads = 2, head_dim = 128, n_rot = 128;
  const auto x = randn(rng, static_cast<size_t>(n_heads * head_dim));
  // Qwen3 long context: factor 4 over 32768 positions, base 1e6.
  for (float factor : {4.0f, 32.0f}) {
    YarnRef y;
    y.factor = factor;
    y.yarn = true;
    y.n_ctx_orig = 32768;
    ops::RopeScaling sc = ops::RopeScaling::plain(1000000.0f);
    sc.freq_scale = 1.0f / factor;
    sc.ext_factor = 1.0f;
    sc.attn_factor = ops::yarn_attn_factor(sc.freq_scale, 1.0f);
    ops::yarn_corr_dims(n_rot, y.n_ctx_orig, sc.freq_base, 32.0f, 1.0f, sc.corr_dims);
    // llama.cpp's attn_factor cancels ggml's own magnitude: the product is ~1.
    CHECK(sc.attn_factor == Approx(1.0f).epsilon(1e-6));
    for (int64_t pos : {1, 33, 2000, 60000}) {
      std::vector<float> a(x);
      ops::rope(a.data(), n_heads, head_dim, n_rot, pos, sc, ops::RopeType::neox);
      check_close(a, reference(x, n_heads, head_dim, n_rot, pos, 1000000.0, true, y), pos);
    }
  }
}

TEST_CASE("rope: YaRN correction dims for a Qwen3 long-context file", "[rope]") {
  float dims[2];
  ops::yarn_corr_dims(128, 32768, 1000000.0f, 32.0f, 1.0f, dims);
  CHECK(dims[0] == static_cast<float>(std::floor(corr_dim(128, 32768, 32, 1e6))));
  CHECK(dims[1] == static_cast<float>(std::ceil(corr_dim(128, 32768, 1, 1e6))));
  CHECK(dims[0] == 23.0f);
  CHECK(dims[1] == 40.0f);
  // Clamped to [0, n_rot - 1].
  ops::yarn_corr_dims(16, 10, 10.0f, 32.0f, 1e-6f, dims);  // d(32) < 0, d(1e-6) ~ 50
  CHECK(dims[0] == 0.0f);  // never negative
  CHECK(dims[1] == 15.0f);
}

TEST_CASE("rope: frequency factors divide each pair's angle (Llama 3 rope_freqs)", "[rope]") {
  std::mt19937 rng(6);
  const int n_heads = 1, head_dim = 64, n_rot = 64;
  const auto x = randn(rng, static_cast<size_t>(head_dim));
  std::vector<float> ff(static_cast<size_t>(n_rot / 2));
  for (size_t i = 0; i < ff.size(); ++i) ff[i] = 1.0f + static_cast<float>(i % 5);
  ops::RopeScaling sc = ops::RopeScaling::plain(500000.0f);
  sc.freq_factors = ff.data();
  YarnRef y;
  y.ff = ff.data();
  for (int64_t pos : {3, 300}) {
    std::vector<float> a(x);
    ops::rope(a.data(), n_heads, head_dim, n_rot, pos, sc, ops::RopeType::norm);
    check_close(a, reference(x, n_heads, head_dim, n_rot, pos, 500000.0, false, y), pos);
  }
}

TEST_CASE("rope: IMRoPE takes the same scaling (text positions equal NEOX rope with YaRN)", "[rope]") {
  std::mt19937 rng(8);
  const int n_heads = 2, head_dim = 128, n_rot = 32;
  const auto x = randn(rng, static_cast<size_t>(n_heads * head_dim));
  ops::RopeScaling sc = ops::RopeScaling::plain(1e7f);
  sc.freq_scale = 0.25f;
  sc.ext_factor = 1.0f;
  sc.attn_factor = ops::yarn_attn_factor(sc.freq_scale, 1.0f);
  ops::yarn_corr_dims(n_rot, 4096, sc.freq_base, 32.0f, 1.0f, sc.corr_dims);
  const int sections[4] = {6, 5, 5, 0};
  for (int64_t p : {5, 700}) {
    std::vector<float> a(x), b(x);
    const int64_t pos[4] = {p, p, p, 0};
    ops::rope_imrope(a.data(), n_heads, head_dim, n_rot, pos, sections, sc);
    ops::rope(b.data(), n_heads, head_dim, n_rot, p, sc, ops::RopeType::neox);
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  }
}
