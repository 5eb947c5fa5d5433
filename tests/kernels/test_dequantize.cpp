// Reference dequantisation against ggml's to_float on shared/fixtures/quant:
// every <type>[_imatrix].qbytes must dequantise bit-exactly to its .dequant.f32.

#include <cstdio>
#include <string>

#include "kernels/ggml_type.h"
#include "kernels/tiers.h"
#include "support/fixtures.h"
#include "quant_fixture.h"

namespace {

using les::GgmlType;

struct Case {
  const char* stem;  // fixture file stem, e.g. "q4_K_imatrix"
  GgmlType type;
};

// Every quantised file the fixtures README (section 4) lists: 4 rows x 512 columns.
constexpr Case kCases[] = {
    {"q4_0", GgmlType::Q4_0},     {"q4_0_imatrix", GgmlType::Q4_0},     {"q4_1", GgmlType::Q4_1},
    {"q4_1_imatrix", GgmlType::Q4_1}, {"q5_0", GgmlType::Q5_0},         {"q5_0_imatrix", GgmlType::Q5_0},
    {"q5_1", GgmlType::Q5_1},     {"q5_1_imatrix", GgmlType::Q5_1},     {"q8_0", GgmlType::Q8_0},
    {"iq4_nl", GgmlType::IQ4_NL}, {"iq4_nl_imatrix", GgmlType::IQ4_NL}, {"q2_K", GgmlType::Q2_K},
    {"q2_K_imatrix", GgmlType::Q2_K}, {"q3_K", GgmlType::Q3_K},         {"q3_K_imatrix", GgmlType::Q3_K},
    {"q4_K", GgmlType::Q4_K},     {"q4_K_imatrix", GgmlType::Q4_K},     {"q5_K", GgmlType::Q5_K},
    {"q5_K_imatrix", GgmlType::Q5_K}, {"q6_K", GgmlType::Q6_K},         {"q6_K_imatrix", GgmlType::Q6_K},
    {"q8_K", GgmlType::Q8_K},
};

constexpr int64_t kRows = 4;
constexpr int64_t kCols = 512;

}  // namespace

TEST_CASE("scalar dequantize_row is bit-exact with ggml to_float on every fixture", "[kernels][dequantize]") {
  les::kernels::KernelTable table;
  les::kernels::fill_scalar_table(table);
  for (const Case& c : kCases) {
    DYNAMIC_SECTION(c.stem) {
      LES_REQUIRE_FIXTURE(qpath, std::string("quant/") + c.stem + ".qbytes");
      LES_REQUIRE_FIXTURE(dpath, std::string("quant/") + c.stem + ".dequant.f32");
      const auto q = les::test::read_file_bytes(qpath);
      const auto expected = les::test::read_file_f32(dpath);
      const auto row_bytes = les::ggml_row_bytes(c.type, kCols);
      REQUIRE(row_bytes.has_value());
      REQUIRE(q.size() == *row_bytes * kRows);
      REQUIRE(expected.size() == static_cast<size_t>(kRows * kCols));

      const auto deq = table.of(c.type).dequantize_row;
      REQUIRE(deq != nullptr);
      std::vector<float> got(kRows * kCols, -12345.0f);
      for (int64_t r = 0; r < kRows; ++r) deq(q.data() + r * *row_bytes, got.data() + r * kCols, kCols);

      int64_t mismatches = 0, first = -1;
      for (size_t i = 0; i < got.size(); ++i) {
        if (les::test::f32_bits(got[i]) != les::test::f32_bits(expected[i])) {
          if (first < 0) first = static_cast<int64_t>(i);
          ++mismatches;
        }
      }
      INFO("first mismatch at " << first << ": got " << (first >= 0 ? got[first] : 0.0f) << " expected "
                                << (first >= 0 ? expected[first] : 0.0f));
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("plain-type dequantisation widens exactly", "[kernels][dequantize]") {
  les::kernels::KernelTable table;
  les::kernels::fill_scalar_table(table);
  // F16: every finite bit pattern round-trips through F32 and back.
  std::vector<les::fp16_t> h;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if (((b >> 10) & 0x1F) != 0x1F) h.push_back(static_cast<les::fp16_t>(b));
  }
  std::vector<float> f(h.size());
  table.of(GgmlType::F16).dequantize_row(h.data(), f.data(), static_cast<int64_t>(h.size()));
  std::vector<les::fp16_t> back(h.size());
  table.of(GgmlType::F16).quantize_row(f.data(), back.data(), static_cast<int64_t>(h.size()));
  CHECK(back == h);
  CHECK(f[1] == 5.9604644775390625e-08f);  // smallest subnormal 2^-24
  CHECK(f[0x3C00] == 1.0f);

  // BF16: the upper half of the F32 bits.
  const les::bf16_t bf[3] = {0x3F80, 0xC000, 0x4049};
  float out[3];
  table.of(GgmlType::BF16).dequantize_row(bf, out, 3);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == -2.0f);
  CHECK(les::test::f32_bits(out[2]) == 0x40490000u);

  const float src[4] = {1.5f, -0.0f, 3e38f, 1e-40f};
  float dst[4];
  table.of(GgmlType::F32).dequantize_row(src, dst, 4);
  for (int i = 0; i < 4; ++i) CHECK(les::test::f32_bits(dst[i]) == les::test::f32_bits(src[i]));
}
