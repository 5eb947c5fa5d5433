// Reference dot products against ggml's CPU vec_dot on the matvec fixtures
// (shared/fixtures/quant/matvec_*), plus seeded random checks of every
// vec_dot_ref against a float64 dot of the dequantised operands.

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/ref.h"
#include "kernels/tiers.h"
#include "support/fixtures.h"
#include "quant_fixture.h"

namespace {

using les::GgmlType;
using namespace les::kernels;

constexpr double kEpsF32 = std::numeric_limits<float>::epsilon();  // 2^-23

struct MatvecCase {
  const char* type;
  GgmlType wtype;
};

constexpr MatvecCase kMatvec[] = {{"q4_0", GgmlType::Q4_0}, {"q8_0", GgmlType::Q8_0}, {"q3_K", GgmlType::Q3_K},
                                  {"q4_K", GgmlType::Q4_K}, {"q5_K", GgmlType::Q5_K}, {"q6_K", GgmlType::Q6_K}};

constexpr int64_t kRows = 64;
constexpr int64_t kCols = 1024;

// sum_i |a_i b_i| in float64, over dequantised operands.
double abs_dot(const std::vector<float>& a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(a[i]) * b[i]);
  return s;
}

}  // namespace

// ggml's SIMD vec_dot sums the same exact per-block integer sums as the
// reference, but combines the per-block float terms in another order (and may
// fuse multiply-adds). Both evaluate sum_b t_b with every t_b = isum_b * scale_b
// correct to ~2 eps, so they differ by at most about
//   (n_blocks + 2) * eps_f32 * sum_b |t_b|  <=  (n_blocks + 2) * eps_f32 * sum_i |w_i x_i|
// (w, x dequantised), the standard bound for two orders of a float sum.
TEST_CASE("vec_dot refs reproduce ggml's matvec y.f32", "[kernels][vec_dot]") {
  KernelTable table;
  fill_scalar_table(table);
  LES_REQUIRE_FIXTURE(xpath, "quant/matvec_x_1024.f32");
  const auto x = les::test::read_file_f32(xpath);
  REQUIRE(x.size() == static_cast<size_t>(kCols));
  for (const MatvecCase& c : kMatvec) {
    DYNAMIC_SECTION(c.type) {
      const std::string stem = std::string("quant/matvec_") + c.type;
      LES_REQUIRE_FIXTURE(wpath, stem + ".w.qbytes");
      LES_REQUIRE_FIXTURE(xqpath, stem + ".x_vecdot.qbytes");
      LES_REQUIRE_FIXTURE(ypath, stem + ".y.f32");
      const auto w = les::test::read_file_bytes(wpath);
      const auto xq_fixture = les::test::read_file_bytes(xqpath);
      const auto y = les::test::read_file_f32(ypath);
      const TypeKernels& k = table.of(c.wtype);
      const TypeKernels& kx = table.of(k.vec_dot_type);
      REQUIRE(k.vec_dot != nullptr);
      REQUIRE(kx.quantize_row != nullptr);
      const size_t wrow = *les::ggml_row_bytes(c.wtype, kCols);
      const size_t xrow = *les::ggml_row_bytes(k.vec_dot_type, kCols);
      REQUIRE(w.size() == wrow * kRows);
      REQUIRE(xq_fixture.size() == xrow);
      REQUIRE(y.size() == static_cast<size_t>(kRows));

      // Our own quantisation of x (bit-exactness is test_quantize_q8's job; here both are used).
      std::vector<uint8_t> xq_own(xrow);
      kx.quantize_row(x.data(), xq_own.data(), kCols);
      std::vector<float> xdeq(kCols);
      kx.dequantize_row(xq_fixture.data(), xdeq.data(), kCols);

      const double n_blocks = static_cast<double>(kCols / les::ggml_type_traits(c.wtype).block_size);
      double worst_ratio = 0;  // max |err| / tolerance, reported
      double worst_rel = 0;    // max |err| / |y|
      double worst_abs = 0, sum_y2 = 0;
      std::vector<float> wdeq(kCols);
      for (int64_t r = 0; r < kRows; ++r) {
        const uint8_t* wr = w.data() + r * wrow;
        k.dequantize_row(wr, wdeq.data(), kCols);
        const double tol = (n_blocks + 2) * kEpsF32 * abs_dot(wdeq, xdeq.data(), kCols);
        float s_fixture = 0, s_own = 0;
        k.vec_dot(kCols, &s_fixture, wr, xq_fixture.data());
        k.vec_dot(kCols, &s_own, wr, xq_own.data());
        const double err = std::fabs(static_cast<double>(s_fixture) - y[r]);
        INFO("row " << r << ": ref " << s_fixture << " ggml " << y[r] << " tol " << tol);
        CHECK(err <= tol);
        CHECK(std::fabs(static_cast<double>(s_own) - y[r]) <= tol);
        worst_ratio = std::max(worst_ratio, err / tol);
        worst_rel = std::max(worst_rel, err / std::fabs(y[r]));
        worst_abs = std::max(worst_abs, err);
        sum_y2 += static_cast<double>(y[r]) * y[r];
      }
      std::printf("matvec %-5s max |ref - ggml| = %.3g of tolerance, %.3g of rms(y), max rel %.3g\n", c.type,
                  worst_ratio, worst_abs / std::sqrt(sum_y2 / kRows), worst_rel);
    }
  }
}
