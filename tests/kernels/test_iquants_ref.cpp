// Scalar reference of the lattice i-quants (kernels/ref_iquants.h) against
// llama.cpp's definition of the formats:
// * dequantisation is bit-exact with gguf-py's dequantize (llama.cpp's Python
//   package) on tests/kernels/data/iquants (tests/kernels/data/gen_iquant_refs.py):
//   blocks that together use every grid index, sign pattern, scale and delta
//   sign, blocks with d = +-0, subnormal, largest finite and inf, random blocks;
// * the dot product's integer part is exact: with d = 1 and a Q8_K scale of
//   1, vec_dot equals the sum of the dequantised weights times the codes
//   (exact in double), block by block;
// * the dot product over whole rows is within the float bound of
//   test_simd_vs_scalar.cpp of the dequantised weights' dot with the
//   dequantised activations.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "iq_test_util.h"
#include "kernels/iq_grids.h"
#include "kernels/kernels.h"
#include "quant_fixture.h"
#include "random_blocks.h"

using namespace les;
using namespace les::kernels;

namespace {

struct RefFile {
  const char* stem;
  GgmlType type;
};
constexpr RefFile kFiles[] = {{"iq2_xxs", GgmlType::IQ2_XXS}, {"iq2_xs", GgmlType::IQ2_XS}, {"iq2_s", GgmlType::IQ2_S},
                              {"iq3_xxs", GgmlType::IQ3_XXS}, {"iq3_s", GgmlType::IQ3_S},   {"iq1_s", GgmlType::IQ1_S},
                              {"iq1_m", GgmlType::IQ1_M}};

std::string data_path(const std::string& name) {
  return std::string(LES_TESTS_SOURCE_DIR) + "/kernels/data/iquants/" + name;
}

// Activations of n elements: one Q8_K row from N(0,1) inputs.
std::vector<uint8_t> q8k_row(int64_t n, std::mt19937& rng, std::vector<float>* deq = nullptr) {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  auto x = les::test::random_activations(scalar, GgmlType::Q4_K, 1, n, 1.0f, rng);
  if (deq) {
    deq->resize(static_cast<size_t>(n));
    scalar.of(GgmlType::Q8_K).dequantize_row(x.data(), deq->data(), n);
  }
  return x;
}

}  // namespace

TEST_CASE("i-quant sign bytes follow ggml's ksigns_iq2xs (even number of minus signs)", "[kernels][iquants]") {
  // The first 16 entries of ggml's table, and the rule for all 128.
  const uint8_t first[16] = {0, 129, 130, 3, 132, 5, 6, 135, 136, 9, 10, 139, 12, 141, 142, 15};
  for (int i = 0; i < 16; ++i) CHECK(iq::kSignsFrom7[i] == first[i]);
  for (int i = 0; i < 128; ++i) {
    CHECK((iq::kSignsFrom7[i] & 0x7F) == i);
    CHECK(__builtin_popcount(iq::kSignsFrom7[i]) % 2 == 0);
  }
}

TEST_CASE("i-quant scalar dequantisation is bit-exact with llama.cpp (gguf-py) on every grid index, sign and scale",
          "[kernels][iquants][dequantize]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  for (const RefFile& f : kFiles) {
    DYNAMIC_SECTION(f.stem) {
      const auto q = les::test::read_file_bytes(data_path(std::string(f.stem) + ".qbytes"));
      const auto expected = les::test::read_file_f32(data_path(std::string(f.stem) + ".dequant.f32"));
      const auto traits = ggml_type_traits(f.type);
      REQUIRE(q.size() % traits.block_bytes == 0);
      const int64_t nb = static_cast<int64_t>(q.size() / traits.block_bytes);
      REQUIRE(nb >= 8);
      REQUIRE(expected.size() == static_cast<size_t>(nb * kQKK));
      std::vector<float> got(expected.size(), -12345.0f);
      REQUIRE(scalar.of(f.type).dequantize_row != nullptr);
      scalar.of(f.type).dequantize_row(q.data(), got.data(), nb * kQKK);
      int64_t mismatches = 0, first = -1;
      for (size_t i = 0; i < got.size(); ++i) {
        if (les::test::f32_bits(got[i]) != les::test::f32_bits(expected[i])) {
          if (first < 0) first = static_cast<int64_t>(i);
          ++mismatches;
        }
      }
      INFO(f.stem << ": " << mismatches << " mismatches; first at block " << first / kQKK << " element "
                  << first % kQKK << (first >= 0 ? ": got " + std::to_string(got[first]) + " want " +
                                                       std::to_string(expected[first])
                                                 : std::string()));
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("i-quant reference dot products: exact integer sums, and the dequantised values' dot within the bound",
          "[kernels][iquants][vec_dot]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(29);
  for (const RefFile& f : kFiles) {
    const auto q = les::test::read_file_bytes(data_path(std::string(f.stem) + ".qbytes"));
    const size_t bb = ggml_type_traits(f.type).block_bytes;
    const int64_t nb = static_cast<int64_t>(q.size() / bb);
    const auto dot = scalar.of(f.type).vec_dot;
    const auto deq = scalar.of(f.type).dequantize_row;
    REQUIRE(dot != nullptr);
    REQUIRE(scalar.of(f.type).vec_dot_type == GgmlType::Q8_K);
    const float factor = iq_dot_factor(f.type);
    // Block by block with d = 1 and the activation scale 1: the result is
    // float(isum) * factor, and isum * factor = sum deq(w) * q8 exactly.
    int checked = 0;
    for (int64_t b = 0; b < nb; ++b) {
      std::vector<uint8_t> w(q.begin() + b * bb, q.begin() + (b + 1) * bb);
      les::test::set_iq_block_d(f.type, w.data(), fp32_to_fp16(1.0f));
      auto x = q8k_row(kQKK, rng);
      reinterpret_cast<block_q8_K*>(x.data())->d = 1.0f;
      const block_q8_K& xb = *reinterpret_cast<const block_q8_K*>(x.data());
      std::vector<float> wd(kQKK);
      deq(w.data(), wd.data(), kQKK);
      double exact = 0;
      for (int e = 0; e < kQKK; ++e) exact += double(wd[e]) * xb.qs[e];
      const int32_t isum = les::test::iq_block_isum(f.type, w.data(), x.data(), 0);
      INFO(f.stem << " block " << b << " isum " << isum << " exact " << exact);
      CHECK(double(isum) * factor == exact);
      float s = 0;
      dot(kQKK, &s, w.data(), x.data());
      if (std::fabs(exact) < (1 << 24) * double(factor)) {
        CHECK(double(s) == exact);
        ++checked;
      }
    }
    CHECK(checked > nb / 2);
    // Whole rows with their own scales (finite-d coverage blocks) against N(0,1) activations.
    for (int64_t len : {1, 3, 8}) {
      if (len > nb) continue;
      const int64_t n = len * kQKK;
      std::vector<uint8_t> w(q.begin(), q.begin() + len * bb);
      std::vector<float> xd, wd(static_cast<size_t>(n));
      auto x = q8k_row(n, rng, &xd);
      deq(w.data(), wd.data(), n);
      double ref = 0;
      for (int64_t i = 0; i < n; ++i) ref += double(wd[i]) * xd[i];
      float s = 0;
      dot(n, &s, w.data(), x.data());
      const double A = les::test::iq_abs_magnitude(f.type, n, w.data(), x.data());
      INFO(f.stem << " n " << n << " s " << s << " dequantised dot " << ref << " A " << A);
      CHECK(std::fabs(double(s) - ref) <= 4.0 * double(n) * FLT_EPSILON * A + double(n) * FLT_MIN);
      CHECK(A > 0);
    }
  }
}
