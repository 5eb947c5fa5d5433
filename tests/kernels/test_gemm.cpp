// The packed GEMM (kernels/gemm.h): the scalar reference against the exact
// product (double) within the derived bound of a fused multiply-add chain,
// every SIMD tier bit-identical to the reference (gemm.h defines one chain per
// output) for shapes that cover every tail (rows, tokens, columns, panel
// column blocks), strides, both weight types and 1 or 2 threads, and the
// checked entry point's refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/gemm.h"
#include "kernels/kernel_tiers.h"

using namespace les;
using namespace les::kernels;

namespace {

struct Problem {
  GgmlType wtype;
  int64_t rows, cols, n, w_stride_elems, x_stride, y_stride;
  std::vector<uint8_t> w;
  std::vector<float> x;
};

Problem make(GgmlType wtype, int64_t rows, int64_t cols, int64_t n, int64_t pad, uint32_t seed) {
  Problem p{wtype, rows, cols, n, cols + pad, cols + pad, rows + pad, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  const size_t elem = wtype == GgmlType::F16 ? 2 : 4;
  p.w.resize(static_cast<size_t>(rows * p.w_stride_elems) * elem);
  for (int64_t i = 0; i < rows * p.w_stride_elems; ++i) {
    const float v = d(rng);
    if (wtype == GgmlType::F16) {
      const fp16_t h = fp32_to_fp16(v);
      std::memcpy(p.w.data() + i * 2, &h, 2);
    } else {
      std::memcpy(p.w.data() + i * 4, &v, 4);
    }
  }
  p.x.resize(static_cast<size_t>(n * p.x_stride));
  for (auto& v : p.x) v = d(rng);
  return p;
}

float weight(const Problem& p, int64_t i, int64_t k) {
  const int64_t at = i * p.w_stride_elems + k;
  if (p.wtype == GgmlType::F16) {
    fp16_t h;
    std::memcpy(&h, p.w.data() + at * 2, 2);
    return fp16_to_fp32(h);
  }
  float v;
  std::memcpy(&v, p.w.data() + at * 4, 4);
  return v;
}

// Y of a run; elements outside the rows x n outputs keep a sentinel, checked unchanged.
std::vector<float> run(const KernelTable& t, ThreadPool* pool, const Problem& p) {
  std::vector<float> y(static_cast<size_t>(p.n * p.y_stride), -7.5f);
  GemmScratch sc;
  const size_t elem = p.wtype == GgmlType::F16 ? 2 : 4;
  const Status s = gemm_checked(t, pool, p.wtype, p.w.data(), static_cast<size_t>(p.w_stride_elems) * elem, p.rows,
                                p.cols, p.x.data(), p.x_stride, p.n, y.data(), p.y_stride, sc);
  REQUIRE(s.ok());
  for (int64_t t2 = 0; t2 < p.n; ++t2)
    for (int64_t i = p.rows; i < p.y_stride; ++i) REQUIRE(y[static_cast<size_t>(t2 * p.y_stride + i)] == -7.5f);
  return y;
}

// Shapes: rows around the 16- and 32-row panels, tokens around the 6- and
// 12-token tiles, columns around the 8/16-element conversions and the 512- and
// 1024-column panel blocks.
const int64_t kShapes[][3] = {{1, 1, 1},     {3, 5, 2},     {16, 16, 6},   {17, 33, 7},   {31, 100, 12},
                              {32, 512, 13}, {33, 513, 25}, {64, 588, 24}, {65, 1025, 5}, {70, 1100, 37},
                              {130, 72, 50}};

}  // namespace

TEST_CASE("scalar gemm is the product within the fma-chain bound", "[gemm]") {
  const KernelTable& s = *kernel_table(KernelTier::scalar);
  for (GgmlType wt : {GgmlType::F16, GgmlType::F32}) {
    for (const auto& sh : kShapes) {
      const Problem p = make(wt, sh[0], sh[1], sh[2], 3, static_cast<uint32_t>(sh[0] * 7 + sh[1]));
      const auto y = run(s, nullptr, p);
      // A chain of m fused multiply-adds: |fl - exact| <= gamma_m * sum |w x|,
      // gamma_m = m u / (1 - m u), u = 2^-24 (each step one rounding).
      const double u = std::ldexp(1.0, -24), m = static_cast<double>(p.cols);
      const double gamma = m * u / (1.0 - m * u);
      for (int64_t t = 0; t < p.n; ++t)
        for (int64_t i = 0; i < p.rows; ++i) {
          double exact = 0, mag = 0;
          for (int64_t k = 0; k < p.cols; ++k) {
            const double pr = static_cast<double>(weight(p, i, k)) * p.x[static_cast<size_t>(t * p.x_stride + k)];
            exact += pr;
            mag += std::fabs(pr);
          }
          REQUIRE(std::fabs(y[static_cast<size_t>(t * p.y_stride + i)] - exact) <= gamma * mag + 1e-30);
        }
    }
  }
}

TEST_CASE("every SIMD tier's gemm is bit-identical to the scalar reference", "[gemm]") {
  const KernelTable& s = *kernel_table(KernelTier::scalar);
  ThreadPool pool(2);
  for (const KernelTable* t : les::test::simd_tables()) {
    INFO("tier " << kernel_tier_name(t->tier));
    for (GgmlType wt : {GgmlType::F16, GgmlType::F32}) {
      for (const auto& sh : kShapes) {
        for (int64_t pad : {0, 5}) {
          const Problem p = make(wt, sh[0], sh[1], sh[2], pad, static_cast<uint32_t>(sh[0] * 31 + sh[2]));
          const auto ref = run(s, nullptr, p);
          const auto one = run(*t, nullptr, p);
          const auto two = run(*t, &pool, p);
          INFO("rows " << p.rows << " cols " << p.cols << " n " << p.n << " pad " << pad);
          REQUIRE(std::memcmp(ref.data(), one.data(), ref.size() * sizeof(float)) == 0);
          REQUIRE(std::memcmp(ref.data(), two.data(), ref.size() * sizeof(float)) == 0);
        }
      }
    }
  }
}

TEST_CASE("gemm_checked refuses bad arguments by name", "[gemm]") {
  const KernelTable& t = default_kernel_table();
  GemmScratch sc;
  std::vector<uint8_t> w(64, 0);
  std::vector<float> x(16, 1.0f), y(16, 0.0f);
  auto call = [&](GgmlType wt, size_t ws, int64_t rows, int64_t cols, int64_t n, int64_t xs, int64_t ys,
                  const void* wp) {
    return gemm_checked(t, nullptr, wt, wp, ws, rows, cols, x.data(), xs, n, y.data(), ys, sc);
  };
  Status s = call(GgmlType::Q8_0, 64, 1, 32, 1, 32, 1, w.data());
  CHECK(s.code() == StatusCode::unsupported);
  CHECK_THAT(s.message(), Catch::Contains("not F16 or F32"));
  s = call(GgmlType::F16, 8, 2, 4, 2, 4, 2, nullptr);
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK_THAT(s.message(), Catch::Contains("null"));
  s = call(GgmlType::F16, 8, 0, 4, 2, 4, 2, w.data());
  CHECK_THAT(s.message(), Catch::Contains("rows=0"));
  s = call(GgmlType::F16, 6, 2, 4, 2, 4, 2, w.data());  // 4 halves need 8 bytes
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK_THAT(s.message(), Catch::Contains("stride"));
  s = call(GgmlType::F32, 16, 2, 4, 2, 4, 1, w.data());  // y_stride < rows
  CHECK_THAT(s.message(), Catch::Contains("stride"));
  CHECK(y == std::vector<float>(16, 0.0f));  // nothing written on error
  s = call(GgmlType::F32, 16, 2, 4, 2, 4, 2, w.data());
  CHECK(s.ok());
}
