// The vision encoder's element-wise OpKernels (layer_norm, gelu_tanh,
// gelu_erf; kernels.h): the scalar references against the formulas evaluated
// in double, and every SIMD tier's entries against the scalar reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/kernel_tiers.h"
#include "kernels/kernels.h"

using namespace les::kernels;

namespace {

std::vector<float> random_row(int64_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.3f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace

TEST_CASE("scalar layer_norm is LayerNorm with weight and bias", "[op_kernels][vision]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  for (int64_t n : {1, 7, 64, 256, 1152}) {
    const auto x = random_row(n, 2.0f, static_cast<uint32_t>(n));
    const auto w = random_row(n, 1.0f, 11), b = random_row(n, 1.0f, 12);
    std::vector<float> y(static_cast<size_t>(n)), y0(static_cast<size_t>(n));
    s->ops.layer_norm(x.data(), w.data(), b.data(), n, 1e-6f, y.data());
    s->ops.layer_norm(x.data(), nullptr, nullptr, n, 1e-6f, y0.data());
    double mean = 0, var = 0;
    for (float v : x) mean += v;
    mean /= static_cast<double>(n);
    for (float v : x) var += (v - mean) * (v - mean);
    var /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) {
      const double z = (x[static_cast<size_t>(i)] - mean) / std::sqrt(var + 1e-6);
      CHECK(y0[static_cast<size_t>(i)] == Approx(z).margin(1e-5));
      CHECK(y[static_cast<size_t>(i)] == Approx(z * w[static_cast<size_t>(i)] + b[static_cast<size_t>(i)]).margin(1e-5));
    }
  }
  // In place, and a constant row gives the bias (variance 0, eps keeps it finite).
  std::vector<float> c(16, 3.0f), b(16, 0.25f);
  s->ops.layer_norm(c.data(), nullptr, b.data(), 16, 1e-6f, c.data());
  for (float v : c) CHECK(v == 0.25f);
}

TEST_CASE("scalar GELUs follow their definitions", "[op_kernels][vision]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::vector<float> x;
  for (int i = -2000; i <= 2000; ++i) x.push_back(static_cast<float>(i) * 0.01f);
  x.push_back(-100.0f);
  x.push_back(100.0f);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> t(x.size()), e(x.size());
  s->ops.gelu_tanh(x.data(), n, t.data());
  s->ops.gelu_erf(x.data(), n, e.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double gt = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    const double ge = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    CHECK(t[i] == Approx(gt).margin(1e-6).epsilon(1e-6));
    CHECK(e[i] == Approx(ge).margin(1e-6).epsilon(1e-6));
  }
}

TEST_CASE("SIMD vision ops agree with the scalar reference", "[op_kernels][vision]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  for (const KernelTable* t : les::test::simd_tables()) {
    INFO("tier " << kernel_tier_name(t->tier));
    REQUIRE(t->ops.layer_norm != nullptr);
    REQUIRE(t->ops.gelu_tanh != nullptr);
    REQUIRE(t->ops.gelu_erf != nullptr);
    for (int64_t n : {1, 15, 16, 17, 64, 100, 1152}) {
      const auto x = random_row(n, 3.0f, static_cast<uint32_t>(n + 5));
      const auto w = random_row(n, 1.0f, 21), b = random_row(n, 1.0f, 22);
      std::vector<float> ys(static_cast<size_t>(n)), yt(static_cast<size_t>(n));
      s->ops.layer_norm(x.data(), w.data(), b.data(), n, 1e-6f, ys.data());
      t->ops.layer_norm(x.data(), w.data(), b.data(), n, 1e-6f, yt.data());
      for (size_t i = 0; i < ys.size(); ++i) CHECK(yt[i] == Approx(ys[i]).margin(1e-5).epsilon(1e-5));
      s->ops.gelu_tanh(x.data(), n, ys.data());
      t->ops.gelu_tanh(x.data(), n, yt.data());
      for (size_t i = 0; i < ys.size(); ++i) CHECK(yt[i] == Approx(ys[i]).margin(1e-6).epsilon(1e-5));
      s->ops.gelu_erf(x.data(), n, ys.data());
      t->ops.gelu_erf(x.data(), n, yt.data());
      for (size_t i = 0; i < ys.size(); ++i) CHECK(yt[i] == Approx(ys[i]).margin(1e-6).epsilon(1e-5));
    }
  }
}
