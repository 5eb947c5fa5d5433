// The lattice i-quant weight quantisers (ref_iquants.h): they write blocks
// the reference dequantises, with errors no worse than ggml's quantisers give
// on the same rows (measured with ggml's quantize_iq* on quant/input_4x512.f32
// and imatrix_512.f32, the numbers below), plus edge cases: zero rows,
// tiny and huge magnitudes, one outlier, no importance.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "iq_test_util.h"
#include "kernels/kernels.h"
#include "kernels/ref_iquants.h"
#include "kernels/weight_quantizers.h"
#include "quant_fixture.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::kernels;

namespace {

const GgmlType kTypes[] = {GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ2_S, GgmlType::IQ3_XXS, GgmlType::IQ3_S};

// Quantises and dequantises `rows` rows of n floats; returns the values.
std::vector<float> round_trip(GgmlType t, const std::vector<float>& x, int64_t rows, int64_t n, const float* imp) {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  const size_t rb = *ggml_row_bytes(t, n);
  std::vector<uint8_t> q(rb * static_cast<size_t>(rows), 0xAB);
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    REQUIRE(quantize_weights_row(scalar, t, x.data() + r * n, q.data() + r * rb, n, imp));
    scalar.of(t).dequantize_row(q.data() + r * rb, y.data() + r * n, n);
  }
  return y;
}

// sqrt(sum w (x - y)^2 / sum w x^2) over one row (w null: all 1).
double rel_err(const float* x, const float* y, int64_t n, const float* w) {
  double e = 0, s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double wi = w ? w[i] : 1.0;
    e += wi * (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    s += wi * double(x[i]) * x[i];
  }
  return s > 0 ? std::sqrt(e / s) : std::sqrt(e);
}

}  // namespace

TEST_CASE("i-quant quantisers exist for the sign-and-magnitude formats only", "[kernels][iquants][quantize]") {
  for (GgmlType t : kTypes) CHECK(weight_quantizer_available(t));
  CHECK_FALSE(weight_quantizer_available(GgmlType::IQ1_S));
  CHECK_FALSE(weight_quantizer_available(GgmlType::IQ1_M));
}

TEST_CASE("i-quant quantisers: edge cases decode to finite values, zero rows to zeros", "[kernels][iquants][quantize]") {
  const int64_t n = 512;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  std::vector<std::vector<float>> inputs;
  inputs.emplace_back(n, 0.0f);
  // 1e-30: below what an F16 super-block scale reaches (decodes to zeros);
  // 1e-6: near the smallest subnormal scale; 1 and 1e4: ordinary.
  for (float mag : {1e-30f, 1e-6f, 1.0f, 1e4f}) {
    std::vector<float> v(n);
    for (auto& e : v) e = nd(rng) * mag;
    inputs.push_back(v);
  }
  {
    std::vector<float> v(n, 0.0f);
    v[300] = -5.0f;  // one outlier in an otherwise empty row
    inputs.push_back(v);
  }
  std::vector<float> imp(n, 1.0f);
  for (GgmlType t : kTypes) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      for (const float* w : {static_cast<const float*>(nullptr), static_cast<const float*>(imp.data())}) {
        const auto y = round_trip(t, inputs[k], 1, n, w);
        INFO(ggml_type_name(t) << " input " << k << (w ? " with" : " without") << " importance");
        for (int64_t i = 0; i < n; ++i) REQUIRE(std::isfinite(y[i]));
        if (k == 0)
          for (int64_t i = 0; i < n; ++i) CHECK(y[i] == 0.0f);
        if (k == 1)
          for (int64_t i = 0; i < n; ++i) CHECK(y[i] == 0.0f);
        if (k == 2) CHECK(rel_err(inputs[k].data(), y.data(), n, nullptr) < 0.9);
        if (k == 3 || k == 4) CHECK(rel_err(inputs[k].data(), y.data(), n, nullptr) < 0.45);
        if (k == 5) CHECK(std::fabs(y[300] + 5.0f) < 0.5f);  // the outlier survives with its sign
      }
    }
  }
}

TEST_CASE("i-quant quantisers are no worse than ggml's on the quant fixture rows", "[kernels][iquants][quantize]") {
  LES_REQUIRE_FIXTURE(xpath, "quant/input_4x512.f32");
  LES_REQUIRE_FIXTURE(ipath, "quant/imatrix_512.f32");
  const auto x = les::test::read_file_f32(xpath);
  const auto imp = les::test::read_file_f32(ipath);
  REQUIRE(x.size() == 4 * 512);
  REQUIRE(imp.size() == 512);
  // ggml's importance-weighted relative errors sqrt(sum imp (x - y)^2 / sum imp x^2)
  // per row (quantize_iq*(..., imatrix_512), 81ff7abe), rows 0..3.
  struct Ggml {
    GgmlType t;
    double err[4];
  };
  const Ggml ggml[] = {
      {GgmlType::IQ2_XXS, {0.2810, 0.2781, 0.4127, 0.2737}}, {GgmlType::IQ2_XS, {0.2535, 0.2659, 0.3321, 0.2362}},
      {GgmlType::IQ2_S, {0.2169, 0.2335, 0.3022, 0.1901}},   {GgmlType::IQ3_XXS, {0.1491, 0.1471, 0.1759, 0.1426}},
      {GgmlType::IQ3_S, {0.1180, 0.1213, 0.1546, 0.1078}},
  };
  for (const Ggml& g : ggml) {
    const auto y = round_trip(g.t, x, 4, 512, imp.data());
    for (int r = 0; r < 4; ++r) {
      const double e = rel_err(x.data() + 512 * r, y.data() + 512 * r, 512, imp.data());
      std::printf("%s row %d: weighted rel err %.4f (ggml %.4f)\n", ggml_type_name(g.t), r, e, g.err[r]);
      INFO(ggml_type_name(g.t) << " row " << r << ": " << e << " vs ggml " << g.err[r]);
      CHECK(e <= g.err[r] * 1.02);
    }
  }
}
