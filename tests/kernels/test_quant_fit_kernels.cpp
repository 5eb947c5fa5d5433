// The weight quantisers' scale-search kernels (FitKernels) of every SIMD tier
// this machine runs against the scalar reference, bit for bit: the contract
// in kernels.h fixes the rounding of every term and the order of every sum,
// so no tolerance is needed (an AVX-512 machine runs the same test on its
// avx512 table, which carries the same contract). Then the quantisers built
// on them: every tier gives the reference's bytes for every weight type.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernel_tiers.h"
#include "kernels/block_formats.h"
#include "kernels/ggml_type.h"
#include "kernels/kernels.h"
#include "kernels/ref.h"
#include "kernels/weight_quantizers.h"

using namespace les;
using namespace les::kernels;

namespace {

bool same_bits(const double* a, const double* b, int n) { return std::memcmp(a, b, sizeof(double) * n) == 0; }

// A group of n values: Gaussian, with some exact ties for the rounding
// (x * s = k + 0.5 for the first candidate), zeros of both signs, outliers and
// subnormals; weights null, random, or with zeros.
struct Group {
  std::vector<float> x, w;
  bool weighted = false;
};

Group make_group(std::mt19937& rng, int n, int variant, float s0) {
  std::normal_distribution<float> nd;
  Group g;
  g.x.resize(static_cast<size_t>(n));
  for (auto& v : g.x) v = nd(rng);
  if (variant % 4 == 1) {  // products x * s0 on or near the rounding ties k + 0.5
    for (int i = 0; i < n; i += 3) g.x[static_cast<size_t>(i)] = (static_cast<float>(i % 7) - 3.5f) / s0;
  }
  if (variant % 4 == 2) {
    g.x[0] = 0.0f;
    g.x[1] = -0.0f;
    g.x[2] = 1e-40f;  // subnormal
    g.x[3] = 40.0f;   // outlier
  }
  if (variant % 4 == 3) {
    for (auto& v : g.x) v *= 1e-3f;
  }
  g.weighted = variant % 3 != 0;
  if (g.weighted) {
    g.w.resize(static_cast<size_t>(n));
    for (auto& v : g.w) v = std::exp(nd(rng));
    if (variant % 5 == 0) g.w[static_cast<size_t>(n / 2)] = 0.0f;
  }
  return g;
}

}  // namespace

TEST_CASE("FitKernels of every SIMD tier equal the scalar reference bit for bit", "[kernels][quantize]") {
  const std::vector<const KernelTable*> tables = les::test::simd_tables();
  if (tables.empty()) WARN("no SIMD tier on this machine: only the reference runs");
  const FitKernels& ref = reference_fit_kernels();
  std::mt19937 rng(20261201);
  const int ns[] = {8, 16, 32, 64, 256};
  const int ranges[][2] = {{-8, 7}, {-16, 15}, {-127, 127}, {-4, 3}, {-32, 31}, {0, 63}, {-128, 127}, {0, 15}};
  for (const KernelTable* t : tables) {
    INFO("tier " << kernel_tier_name(t->tier));
    for (int n : ns) {
      for (int variant = 0; variant < 12; ++variant) {
        std::uniform_real_distribution<float> us(0.5f, 40.0f);
        float s[24];
        for (int c = 0; c < 24; ++c) s[c] = (c % 2 ? -1.0f : 1.0f) * us(rng);
        s[5] = 2.0f;  // ties at x = (k + 0.5) / 2
        const Group g = make_group(rng, n, variant, s[0]);
        const float* w = g.weighted ? g.w.data() : nullptr;
        double a0[24], b0[24], c0[24], a1[24], b1[24], c1[24];
        for (const auto& r : ranges) {
          INFO("n " << n << " variant " << variant << " levels " << r[0] << ".." << r[1]);
          ref.eval_symmetric(g.x.data(), w, n, r[0], r[1], s, 24, a0, b0);
          t->fit.eval_symmetric(g.x.data(), w, n, r[0], r[1], s, 24, a1, b1);
          CHECK(same_bits(a0, a1, 24));
          CHECK(same_bits(b0, b1, 24));
          const float x0 = r[0] == 0 ? -1.25f : g.x[0];
          ref.eval_affine(g.x.data(), w, n, x0, r[1], s, 24, a0, b0, c0);
          t->fit.eval_affine(g.x.data(), w, n, x0, r[1], s, 24, a1, b1, c1);
          CHECK(same_bits(a0, a1, 24));
          CHECK(same_bits(b0, b1, 24));
          CHECK(same_bits(c0, c1, 24));
        }
        // IQ4_NL's table, with candidates that put products exactly on midpoints.
        float st[24];
        for (int c = 0; c < 24; ++c) st[c] = s[c] * 4.0f;
        std::vector<float> xt = g.x;
        xt[0] = 0.5f * static_cast<float>(kIQ4NLValues[3] + kIQ4NLValues[4]) / st[0];
        ref.eval_symmetric_table16(xt.data(), w, n, kIQ4NLValues, st, 24, a0, b0);
        t->fit.eval_symmetric_table16(xt.data(), w, n, kIQ4NLValues, st, 24, a1, b1);
        CHECK(same_bits(a0, a1, 24));
        CHECK(same_bits(b0, b1, 24));
      }
    }
  }
}

TEST_CASE("the reference FitKernels follow their contract on a hand-checked group", "[kernels][quantize]") {
  // x * s = {2.5, -0.5, 3.7, -9.0, 1.5, 0.49, 7.5, -8.5} with s = 1: round half to
  // even gives {2, -0, 4, -9, 2, 0, 8, -8}, clamped to -8..7: {2, 0, 4, -8, 2, 0, 7, -8}.
  const float x[8] = {2.5f, -0.5f, 3.7f, -9.0f, 1.5f, 0.49f, 7.5f, -8.5f};
  const float s[1] = {1.0f};
  double sxl, sll;
  reference_fit_kernels().eval_symmetric(x, nullptr, 8, -8, 7, s, 1, &sxl, &sll);
  const double q[8] = {2, 0, 4, -8, 2, 0, 7, -8};
  double e_sxl = 0, e_sll = 0;
  for (int i = 0; i < 8; ++i) e_sxl += x[i] * q[i], e_sll += q[i] * q[i];
  CHECK(sxl == Approx(e_sxl).epsilon(1e-15));
  CHECK(sll == e_sll);
  // Affine with x0 = -1: (x + 1) = {3.5, 0.5, 4.7, -8, 2.5, 1.49, 8.5, -7.5} -> {4, 0, 5, 0, 2, 1, 8, 0} (qmax 15).
  double sq, sqq, sxq;
  reference_fit_kernels().eval_affine(x, nullptr, 8, -1.0f, 15, s, 1, &sq, &sqq, &sxq);
  const double qa[8] = {4, 0, 5, 0, 2, 1, 8, 0};
  double e_sq = 0, e_sqq = 0, e_sxq = 0;
  for (int i = 0; i < 8; ++i) e_sq += qa[i], e_sqq += qa[i] * qa[i], e_sxq += x[i] * qa[i];
  CHECK(sq == e_sq);
  CHECK(sqq == e_sqq);
  CHECK(sxq == Approx(e_sxq).epsilon(1e-15));
}

TEST_CASE("every tier's weight quantiser gives the reference's bytes", "[kernels][quantize]") {
  const GgmlType types[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                            GgmlType::Q8_0, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K,
                            GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F16,
                            GgmlType::BF16, GgmlType::F32, GgmlType::IQ4_XS, GgmlType::MXFP4};
  const int64_t n = 512;
  std::mt19937 rng(77);
  std::normal_distribution<float> nd;
  std::vector<float> x(n), imp(n);
  for (int64_t i = 0; i < n; ++i) x[i] = nd(rng) * (i % 61 == 0 ? 8.0f : 0.02f);
  for (auto& v : imp) v = std::exp(1.5f * nd(rng));
  std::vector<float> offset(x);
  for (auto& v : offset) v += 0.05f;  // rows whose K-quant mins matter
  for (const KernelTable* t : les::test::simd_tables()) {
    for (const GgmlType type : types) {
      const size_t rb = *ggml_row_bytes(type, n);
      std::vector<uint8_t> a(rb), b(rb);
      for (const std::vector<float>* row : {&x, &offset}) {
        for (const float* importance : {static_cast<const float*>(nullptr), static_cast<const float*>(imp.data())}) {
          INFO(kernel_tier_name(t->tier) << " " << ggml_type_name(type) << (importance ? " with importance" : ""));
          reference_weight_quantizer(type)(row->data(), a.data(), n, importance);
          REQUIRE(quantize_weights_row(*t, type, row->data(), b.data(), n, importance));
          CHECK(a == b);
        }
      }
    }
  }
  std::vector<uint8_t> out(64);
  CHECK_FALSE(quantize_weights_row(*kernel_table(KernelTier::scalar), GgmlType::Q8_K, x.data(), out.data(), 256,
                                   nullptr));
}
