// matvec / matmul drivers: results equal a direct vec_dot per output element
// (bit for bit), for every tier, every weight type, awkward shapes and 1-3
// threads; argument checking returns statuses; the activation quantisation of
// the driver reproduces ggml's bytes and outputs (quant/matvec_* fixtures).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "random_blocks.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::kernels;
using les::test::ScaleMode;

namespace {

std::vector<const KernelTable*> all_tables() {
  std::vector<const KernelTable*> v;
  for (int i = 0; i < kKernelTierCount; ++i)
    if (const KernelTable* t = kernel_table(static_cast<KernelTier>(i))) v.push_back(t);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

int64_t min_cols(const KernelTable& t, GgmlType w) {
  return std::max<int64_t>({ggml_type_traits(w).block_size, ggml_type_traits(t.of(w).vec_dot_type).block_size, 32});
}

}  // namespace

TEST_CASE("matvec equals per-row vec_dot for any thread count", "[kernels][matmul]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(5);
  ThreadPool p1(1), p2(2), p3(3);
  for (const KernelTable* table : all_tables()) {
    for (GgmlType t : les::test::dot_weight_types()) {
      const int64_t cols = 2 * min_cols(scalar, t);
      for (int64_t rows : {1, 3, 4, 7, 33}) {
        auto w = les::test::random_weights(scalar, t, rows, cols, ScaleMode::normal, rng);
        std::vector<float> x;
        auto xq_bytes = les::test::random_activations(scalar, t, 1, cols, 1.0f, rng, &x);
        const size_t rb = *ggml_row_bytes(t, cols);
        std::vector<float> expect(rows);
        for (int64_t r = 0; r < rows; ++r) table->of(t).vec_dot(cols, &expect[r], w.data() + rb * r, xq_bytes.data());
        INFO("tier " << kernel_tier_name(table->tier) << " type " << ggml_type_name(t) << " rows " << rows);
        std::vector<uint8_t> scratch;
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &p1, &p2, &p3}) {
          std::vector<float> y(rows, -1.0f);
          matvec(*table, pool, t, w.data(), rows, cols, x.data(), y.data(), scratch);
          CHECK(same_bits(y, expect));
        }
        // Quantise once, reuse for a second matrix (the MoE pattern).
        const QuantizedActivations xq = quantize_activations(*table, &p2, t, x.data(), cols, 1, scratch);
        REQUIRE(xq.row_bytes == xq_bytes.size());
        CHECK(std::memcmp(xq.data, xq_bytes.data(), xq.row_bytes) == 0);
        std::vector<float> y(rows);
        matvec_quantized(*table, &p3, t, w.data(), rows, xq, y.data());
        CHECK(same_bits(y, expect));
      }
    }
  }
}

TEST_CASE("matmul equals per-element vec_dot for 1..67 tokens and any thread count", "[kernels][matmul]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(6);
  ThreadPool p2(2), p3(3);
  for (const KernelTable* table : all_tables()) {
    for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q3_K, GgmlType::Q8_0, GgmlType::Q6_K, GgmlType::Q4_0, GgmlType::F16,
                       GgmlType::Q4_1, GgmlType::F32}) {
      const int64_t cols = min_cols(scalar, t);
      for (int64_t rows : {1, 7, 33}) {
        auto w = les::test::random_weights(scalar, t, rows, cols, ScaleMode::normal, rng);
        const size_t rb = *ggml_row_bytes(t, cols);
        for (int64_t n : {1, 2, 3, 8, 9, 17, 33, 67}) {
          std::vector<float> X;
          auto xq = les::test::random_activations(scalar, t, n, cols, 1.0f, rng, &X);
          const size_t xrb = xq.size() / static_cast<size_t>(n);
          std::vector<float> expect(static_cast<size_t>(n * rows));
          for (int64_t tok = 0; tok < n; ++tok)
            for (int64_t r = 0; r < rows; ++r)
              table->of(t).vec_dot(cols, &expect[tok * rows + r], w.data() + rb * r, xq.data() + xrb * tok);
          INFO("tier " << kernel_tier_name(table->tier) << " type " << ggml_type_name(t) << " rows " << rows << " n " << n);
          std::vector<uint8_t> scratch;
          for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &p2, &p3}) {
            std::vector<float> Y(expect.size(), -1.0f);
            matmul(*table, pool, t, w.data(), rows, cols, X.data(), n, Y.data(), scratch);
            CHECK(same_bits(Y, expect));
          }
        }
      }
    }
  }
}

TEST_CASE("check_matmul_args names what is wrong", "[kernels][matmul]") {
  const KernelTable& table = default_kernel_table();
  std::vector<uint8_t> w(1 << 16);
  std::vector<float> x(1024), y(1024);
  std::vector<uint8_t> scratch;
  CHECK(check_matmul_args(table, GgmlType::Q4_K, w.data(), 4, 256, x.data(), 1, y.data()).ok());

  Status s = check_matmul_args(table, GgmlType::Q4_K, w.data(), 4, 100, x.data(), 1, y.data());
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK(s.message().find("cols=100") != std::string::npos);

  s = check_matmul_args(table, GgmlType::Q4_0, nullptr, 4, 32, x.data(), 1, y.data());
  CHECK(s.code() == StatusCode::invalid_argument);

  s = check_matmul_args(table, GgmlType::Q4_0, w.data(), 0, 32, x.data(), 1, y.data());
  CHECK(s.code() == StatusCode::invalid_argument);

  s = check_matmul_args(table, GgmlType::Q8_K, w.data(), 1, 256, x.data(), 1, y.data());
  CHECK(s.code() == StatusCode::unsupported);
  CHECK(s.message().find("Q8_K") != std::string::npos);

  s = check_matmul_args(table, static_cast<GgmlType>(4), w.data(), 1, 32, x.data(), 1, y.data());
  CHECK(s.code() == StatusCode::invalid_argument);
  s = check_matmul_args(table, static_cast<GgmlType>(999), w.data(), 1, 32, x.data(), 1, y.data());
  CHECK(s.code() == StatusCode::invalid_argument);

  // Checked entry points write nothing on error.
  y[0] = 42.0f;
  CHECK_FALSE(matvec_checked(table, nullptr, GgmlType::Q8_0, w.data(), 1, 33, x.data(), y.data(), scratch).ok());
  CHECK(y[0] == 42.0f);
  CHECK_FALSE(matmul_checked(table, nullptr, GgmlType::Q8_0, w.data(), 1, 32, x.data(), 0, y.data(), scratch).ok());
  CHECK(matmul_checked(table, nullptr, GgmlType::Q8_0, w.data(), 2, 32, x.data(), 3, y.data(), scratch).ok());
}

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("matvec quantises F32 activations to ggml's bytes (quant/matvec_*)", "[kernels][matmul][fixtures]") {
  const struct {
    const char* name;
    GgmlType type;
  } cases[] = {{"q4_0", GgmlType::Q4_0}, {"q8_0", GgmlType::Q8_0}, {"q3_K", GgmlType::Q3_K},
               {"q4_K", GgmlType::Q4_K}, {"q5_K", GgmlType::Q5_K}, {"q6_K", GgmlType::Q6_K}};
  const int64_t rows = 64, cols = 1024;
  LES_REQUIRE_FIXTURE(xf_path, "quant/matvec_x_1024.f32");
  const auto xb = read_file(xf_path);
  REQUIRE(xb.size() == 4 * cols);
  std::vector<float> x(cols);
  std::memcpy(x.data(), xb.data(), xb.size());
  ThreadPool pool(2);
  for (const auto& c : cases) {
    const std::string base = std::string("quant/matvec_") + c.name;
    LES_REQUIRE_FIXTURE(wpath, base + ".w.qbytes");
    LES_REQUIRE_FIXTURE(xqpath, base + ".x_vecdot.qbytes");
    const auto w = read_file(wpath);
    const auto xq_ggml = read_file(xqpath);
    for (const KernelTable* table : all_tables()) {
      INFO("tier " << kernel_tier_name(table->tier) << " " << c.name);
      std::vector<uint8_t> scratch;
      const QuantizedActivations xq = quantize_activations(*table, &pool, c.type, x.data(), cols, 1, scratch);
      REQUIRE(xq.row_bytes == xq_ggml.size());
      CHECK(std::memcmp(xq.data, xq_ggml.data(), xq.row_bytes) == 0);
      std::vector<float> y(rows);
      REQUIRE(matvec_checked(*table, &pool, c.type, w.data(), rows, cols, x.data(), y.data(), scratch).ok());
      // Same bytes as ggml's activations, so the outputs are exactly the tier's
      // vec_dot on the fixture bytes; test_simd_vs_scalar bounds those against y.f32.
      const size_t rb = *ggml_row_bytes(c.type, cols);
      for (int64_t r = 0; r < rows; ++r) {
        float expect = 0;
        table->of(c.type).vec_dot(cols, &expect, w.data() + rb * r, xq_ggml.data());
        CHECK(std::memcmp(&y[r], &expect, 4) == 0);
      }
    }
  }
}

TEST_CASE("matmul_quantized_jobs equals one matmul_quantized per matrix, bit for bit", "[kernels][matmul]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(17);
  ThreadPool p2(2), p3(3);
  // Three weight types that share one activation type (Q8_K), as Q/K/V or gate/up can.
  const GgmlType types[] = {GgmlType::Q4_K, GgmlType::Q3_K, GgmlType::Q6_K};
  const int64_t cols = 512;
  const int64_t rows[] = {33, 7, 20};
  for (const KernelTable* table : all_tables()) {
    std::vector<std::vector<uint8_t>> w;
    for (int i = 0; i < 3; ++i) w.push_back(les::test::random_weights(scalar, types[i], rows[i], cols, ScaleMode::normal, rng));
    for (int64_t n : {1, 2, 5, 9, 19}) {
      std::vector<float> X;
      les::test::random_activations(scalar, GgmlType::Q4_K, n, cols, 1.0f, rng, &X);
      std::vector<uint8_t> scratch;
      const QuantizedActivations xq = quantize_activations(*table, nullptr, GgmlType::Q4_K, X.data(), cols, n, scratch);
      std::vector<std::vector<float>> expect(3);
      for (int i = 0; i < 3; ++i) {
        expect[i].assign(static_cast<size_t>(n * rows[i]), -1.0f);
        matmul_quantized(*table, nullptr, types[i], w[i].data(), rows[i], xq, expect[i].data());
      }
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &p2, &p3}) {
        INFO("tier " << kernel_tier_name(table->tier) << " n " << n << " threads " << (pool ? pool->n_threads() : 0));
        std::vector<std::vector<float>> Y(3);
        MatmulJob jobs[3];
        for (int i = 0; i < 3; ++i) {
          Y[i].assign(expect[i].size(), -2.0f);
          jobs[i] = {types[i], w[i].data(), rows[i], Y[i].data()};
        }
        matmul_quantized_jobs(*table, pool, jobs, 3, xq);
        for (int i = 0; i < 3; ++i) CHECK(same_bits(Y[i], expect[i]));
      }
    }
  }
}
