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
      // LayerNorm (kernels/layer_norm_chunks.h): only the order of the two double
      // sums differs, so the float mean and variance are the reference's or
      // their neighbours: |dmean| <= 2^-23 |mean|, and s = 1 / sqrt(var + eps)
      // moves by at most 2^-23 + the re-rounding of sqrt and the division
      // (< 2^-22 relative together). Then each of the 4 element-wise roundings
      // (c, c s, c s w, + b) may land on the other neighbour: 2^-22 relative
      // of the larger term in each. Bound: |w| s (2^-23 |mean| + 2^-22 |c|) +
      // 2^-21 (|c s w| + |b|).
      {
        double sum = 0, sum2 = 0;
        for (float v : x) sum += v;
        const double mean = sum / static_cast<double>(n);
        for (float v : x) sum2 += (v - mean) * (v - mean);
        const double sc = 1.0 / std::sqrt(sum2 / static_cast<double>(n) + 1e-6);
        for (size_t i = 0; i < ys.size(); ++i) {
          const double c = std::fabs(x[i] - mean), wi = std::fabs(w[i]);
          const double bound = wi * sc * (0x1p-23 * std::fabs(mean) + 0x1p-22 * c) +
                               0x1p-21 * (c * sc * wi + std::fabs(b[i]));
          INFO("n " << n << " i " << i);
          CHECK(std::fabs(static_cast<double>(yt[i]) - ys[i]) <= bound);
        }
      }
      s->ops.gelu_tanh(x.data(), n, ys.data());
      t->ops.gelu_tanh(x.data(), n, yt.data());
      for (size_t i = 0; i < ys.size(); ++i) CHECK(yt[i] == Approx(ys[i]).margin(1e-6).epsilon(1e-5));
      s->ops.gelu_erf(x.data(), n, ys.data());
      t->ops.gelu_erf(x.data(), n, yt.data());
      for (size_t i = 0; i < ys.size(); ++i) CHECK(yt[i] == Approx(ys[i]).margin(1e-6).epsilon(1e-5));
    }
  }
}

// Bounds of |SIMD - reference| (u = 2^-24; kernels/gelu_chunks.h gives the
// SIMD formulas). Both compute g(x) = x S with S in [0, 1].
// tanh: S = (1 + tanh v) / 2 = 1 / (1 + e^-2v), v = sqrt(2/pi) x (1 + 0.044715 x^2)
//   formed with at most 5 roundings in each version (|dv| <= 5 u |v|) and
//   dS/dv <= 1/2: 5 u |v| for the two together. The reference's tanhf (<= 2
//   ulp) and 1 + tanh add <= 2 u to S; the SIMD exp (<= 1.5 ulp = 3 u
//   relative), 1 + e and the division <= 4 u; the final products 2 u
//   relative: |d| <= |x| u (5 |v| + 8).
// erf: the reference's z = x / sqrt(2) (dS <= 0.25 u: |z| e^-z^2 <= 0.43),
//   erff (<= 2 ulp: 1 u in S) and 1 + erf (1 u); the SIMD erfc's
//   approximation (1.5e-7 absolute, Abramowitz & Stegun 7.1.26: 0.75e-7 in S)
//   and evaluation (t 3 roundings, Horner terms up to 1.5 in size, exp 3 u
//   relative, products: <= 16 u in erfc, 8 u in S); final products 2 u:
//   |d| <= |x| (0.75e-7 + 13.25 u).
TEST_CASE("SIMD GELUs stay within their derived bounds of the scalar reference", "[op_kernels][vision]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  const double u = std::ldexp(1.0, -24);
  std::vector<float> x;
  for (int i = -12 * 256; i < 12 * 256; ++i) x.push_back(static_cast<float>(i) / 256.0f);
  for (float v : {0.0f, -0.0f, 100.0f, -100.0f, 1e4f, -1e4f, 1e-30f, -1e-30f}) x.push_back(v);
  while (x.size() % 16 != 0) x.push_back(0.5f);  // every element through the SIMD chunks
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> ys(x.size()), yt(x.size());
  for (const KernelTable* t : les::test::simd_tables()) {
    INFO("tier " << kernel_tier_name(t->tier));
    s->ops.gelu_tanh(x.data(), n, ys.data());
    t->ops.gelu_tanh(x.data(), n, yt.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = 0.7978845608 * x[i] * (1.0 + 0.044715 * x[i] * x[i]);
      INFO("gelu_tanh x = " << x[i]);
      REQUIRE(std::fabs(static_cast<double>(yt[i]) - ys[i]) <= std::fabs(x[i]) * u * (5.0 * std::fabs(v) + 8.0));
    }
    s->ops.gelu_erf(x.data(), n, ys.data());
    t->ops.gelu_erf(x.data(), n, yt.data());
    for (size_t i = 0; i < x.size(); ++i) {
      INFO("gelu_erf x = " << x[i]);
      REQUIRE(std::fabs(static_cast<double>(yt[i]) - ys[i]) <= std::fabs(x[i]) * (0.75e-7 + 13.25 * u));
    }
  }
}
