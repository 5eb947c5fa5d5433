// Every SIMD tier this machine runs against the scalar reference of the
// lattice i-quants (ref_iquants.h), on the same bytes. The tiers keep the
// reference's order of float operations (int32 block sums, then one F32
// accumulator block after block), so every result must have the reference's
// bits: vec_dot and each row of vec_dot_multi, on random blocks with every
// scale mode, on the llama.cpp-checked coverage blocks (every grid index, sign
// pattern and scale), on SIMD-misaligned buffers, and with unit scales (the
// exact integer sums).
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "iq_test_util.h"
#include "kernel_tiers.h"
#include "kernels/kernels.h"
#include "quant_fixture.h"
#include "random_blocks.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::kernels;
using les::test::ScaleMode;

namespace {

// `nb` random blocks of type t with their super-block scales set by `mode`.
std::vector<uint8_t> random_iq_row(GgmlType t, int64_t nb, ScaleMode mode, std::mt19937& rng) {
  const size_t bb = ggml_type_traits(t).block_bytes;
  std::vector<uint8_t> w(bb * static_cast<size_t>(nb));
  for (auto& byte : w) byte = static_cast<uint8_t>(rng());
  for (int64_t b = 0; b < nb; ++b) les::test::set_iq_block_d(t, w.data() + b * bb, les::test::pick_scale(mode, rng));
  return w;
}

std::vector<uint8_t> coverage_blocks(GgmlType t) {
  static const char* stems[] = {"iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m"};
  const auto& types = les::test::lattice_iquant_types();
  for (size_t i = 0; i < types.size(); ++i)
    if (types[i] == t)
      return les::test::read_file_bytes(std::string(LES_TESTS_SOURCE_DIR) + "/kernels/data/iquants/" + stems[i] +
                                        ".qbytes");
  return {};
}

void check_same_bits(const KernelTable& table, GgmlType t, int64_t n, const uint8_t* w, const uint8_t* x,
                     size_t x_stride, int nx, const std::string& what) {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  const TypeKernels& k = table.of(t);
  for (int r = 0; r < nx; ++r) {
    float s = 0, s_ref = 0;
    k.vec_dot(n, &s, w, x + r * x_stride);
    scalar.of(t).vec_dot(n, &s_ref, w, x + r * x_stride);
    INFO("tier " << kernel_tier_name(table.tier) << " " << ggml_type_name(t) << " n " << n << " " << what << " row "
                 << r << ": " << s << " vs reference " << s_ref);
    CHECK(std::memcmp(&s, &s_ref, 4) == 0);
  }
  if (k.vec_dot_multi == nullptr) return;
  for (int m = 1; m <= nx; ++m) {
    std::vector<float> out(static_cast<size_t>(3 * m), -7.0f);
    k.vec_dot_multi(n, out.data(), 3, w, x, x_stride, m);
    for (int r = 0; r < m; ++r) {
      float s_ref = 0;
      scalar.of(t).vec_dot(n, &s_ref, w, x + r * x_stride);
      INFO("tier " << kernel_tier_name(table.tier) << " " << ggml_type_name(t) << " multi " << m << " row " << r << " "
                   << what);
      CHECK(std::memcmp(&out[3 * r], &s_ref, 4) == 0);
      CHECK(out[3 * r + 1] == -7.0f);
    }
  }
}

}  // namespace

TEST_CASE("i-quant SIMD dot products have the scalar reference's bits", "[kernels][iquants][simd]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  const auto tables = les::test::simd_tables();
  if (tables.empty()) les::test::mark_skipped("no SIMD tier runs on this machine");
  std::mt19937 rng(2929);
  for (const KernelTable* table : tables) {
    for (GgmlType t : les::test::lattice_iquant_types()) {
      REQUIRE(table->of(t).vec_dot != nullptr);
      REQUIRE(table->of(t).vec_dot_type == GgmlType::Q8_K);
      for (int64_t nb : {1, 2, 3, 8}) {
        const int64_t n = nb * kQKK;
        for (ScaleMode mode : {ScaleMode::normal, ScaleMode::zero, ScaleMode::huge, ScaleMode::tiny}) {
          for (float mag : {1.0f, 0.0f, 1e4f}) {
            const auto w = random_iq_row(t, nb, mode, rng);
            const auto x = les::test::random_activations(scalar, t, kVecDotMultiMax, n, mag, rng);
            check_same_bits(*table, t, n, w.data(), x.data(), x.size() / kVecDotMultiMax, kVecDotMultiMax, "random");
          }
        }
      }
      // The coverage blocks: every grid index, sign pattern and scale.
      const auto cover = coverage_blocks(t);
      const size_t bb = ggml_type_traits(t).block_bytes;
      REQUIRE(cover.size() % bb == 0);
      const int64_t n = static_cast<int64_t>(cover.size() / bb) * kQKK;
      const auto x = les::test::random_activations(scalar, t, 2, n, 1.0f, rng);
      check_same_bits(*table, t, n, cover.data(), x.data(), x.size() / 2, 2, "coverage blocks");
    }
  }
}

TEST_CASE("i-quant SIMD dot products give the same bits from SIMD-misaligned buffers", "[kernels][iquants][simd]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(31);
  for (const KernelTable* table : les::test::simd_tables()) {
    for (GgmlType t : les::test::lattice_iquant_types()) {
      const int64_t n = 4 * kQKK;
      const auto w = random_iq_row(t, 4, ScaleMode::normal, rng);
      const auto x = les::test::random_activations(scalar, t, 1, n, 1.0f, rng);
      float s_ref = 0;
      scalar.of(t).vec_dot(n, &s_ref, w.data(), x.data());
      // Offsets 2 (the blocks' natural alignment), 6, 34 for weights; 4, 12, 36 for Q8_K rows.
      for (size_t off : {2, 6, 34}) {
        // Room for the largest offset: off for the weights, 2 * off for the activations.
        std::vector<uint8_t> wbuf(w.size() + 64), xbuf(x.size() + 2 * 64);
        std::memcpy(wbuf.data() + off, w.data(), w.size());
        std::memcpy(xbuf.data() + 2 * off, x.data(), x.size());
        float s = 0;
        table->of(t).vec_dot(n, &s, wbuf.data() + off, xbuf.data() + 2 * off);
        INFO("tier " << kernel_tier_name(table->tier) << " " << ggml_type_name(t) << " offset " << off);
        CHECK(std::memcmp(&s, &s_ref, 4) == 0);
      }
    }
  }
}

TEST_CASE("i-quant SIMD integer block sums are exact (unit scales)", "[kernels][iquants][simd]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(17);
  for (const KernelTable* table : les::test::simd_tables()) {
    for (GgmlType t : les::test::lattice_iquant_types()) {
      for (int rep = 0; rep < 20; ++rep) {
        auto w = random_iq_row(t, 1, ScaleMode::normal, rng);
        les::test::set_iq_block_d(t, w.data(), fp32_to_fp16(1.0f));
        auto x = les::test::random_activations(scalar, t, 1, kQKK, 1.0f, rng);
        reinterpret_cast<block_q8_K*>(x.data())->d = 1.0f;
        const int32_t isum = les::test::iq_block_isum(t, w.data(), x.data(), 0);
        float s = 0;
        table->of(t).vec_dot(kQKK, &s, w.data(), x.data());
        INFO("tier " << kernel_tier_name(table->tier) << " " << ggml_type_name(t) << " isum " << isum);
        if (std::abs(isum) < (1 << 24)) CHECK(s == static_cast<float>(isum) * iq_dot_factor(t));
      }
    }
  }
}
