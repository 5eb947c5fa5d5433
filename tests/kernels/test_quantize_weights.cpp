// Reference weight quantisers judged against ggml's on the same inputs: the
// relative RMSE (rmse / rms(x), per row, after dequantising with the
// bit-exact reference dequantisers) of input_4x512.f32 must stay within 1.01x
// of the rel_rmse_per_row that shared/fixtures/quant/manifest.json records for
// ggml_quantize_chunk, with and without imatrix_512.f32 as importance (for
// IQ4_XS and MXFP4, which the manifest lacks: tests/kernels/data/ggml_rel_rmse.txt). The
// quantisers are deterministic (exact arithmetic contracts, the same bytes on
// every tier and x86 machine), so the ratios printed here are the ones every
// run sees; the worst is 1.0041 (q4_K row 3, the offset uniform row).

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/ref.h"
#include "kernels/tiers.h"
#include "kernels/weight_quantizers.h"
#include "support/fixtures.h"
#include "quant_fixture.h"

namespace {

using les::GgmlType;
using namespace les::kernels;

constexpr int64_t kRows = 4;
constexpr int64_t kCols = 512;
constexpr double kAllowedRatio = 1.01;

// rel_rmse_per_row of the manifest entry whose quantized_file is `file` (4 values), read
// with a minimal scan of the JSON text (the kernels-only build has no JSON library).
std::vector<double> manifest_rel_rmse(const std::string& manifest, const std::string& file) {
  const size_t at = manifest.find("\"quantized_file\": \"" + file + "\"");
  REQUIRE(at != std::string::npos);
  const size_t key = manifest.find("\"rel_rmse_per_row\"", at);
  REQUIRE(key != std::string::npos);
  const char* p = manifest.c_str() + manifest.find('[', key) + 1;
  std::vector<double> v;
  for (int i = 0; i < kRows; ++i) {
    char* end = nullptr;
    v.push_back(std::strtod(p, &end));
    REQUIRE(end != p);
    p = end + 1;  // skip ','
  }
  return v;
}

// The same 4 values from tests/kernels/data/ggml_rel_rmse.txt ("stem v0 v1 v2 v3" lines).
std::vector<double> committed_rel_rmse(const std::string& stem) {
  const auto bytes = les::test::read_file_bytes(std::string(LES_TESTS_SOURCE_DIR) + "/kernels/data/ggml_rel_rmse.txt");
  const std::string text(bytes.begin(), bytes.end());
  const size_t at = text.find("\n" + stem + " ");
  REQUIRE(at != std::string::npos);
  const char* p = text.c_str() + at + stem.size() + 2;
  std::vector<double> v;
  for (int i = 0; i < kRows; ++i) {
    char* end = nullptr;
    v.push_back(std::strtod(p, &end));
    REQUIRE(end != p);
    p = end;
  }
  return v;
}

struct Case {
  const char* stem;
  GgmlType type;
};

const Case kCases[] = {{"q4_0", GgmlType::Q4_0}, {"q4_1", GgmlType::Q4_1},     {"q5_0", GgmlType::Q5_0},
                       {"q5_1", GgmlType::Q5_1}, {"q8_0", GgmlType::Q8_0},     {"iq4_nl", GgmlType::IQ4_NL},
                       {"q2_K", GgmlType::Q2_K}, {"q3_K", GgmlType::Q3_K},     {"q4_K", GgmlType::Q4_K},
                       {"q5_K", GgmlType::Q5_K}, {"q6_K", GgmlType::Q6_K},     {"iq4_xs", GgmlType::IQ4_XS},
                       {"mxfp4", GgmlType::MXFP4}};

QuantizeWeightsFn quantizer(GgmlType t) {
  const QuantizeWeightsFn f = reference_weight_quantizer(t);
  REQUIRE(f != nullptr);
  return f;
}

}  // namespace

TEST_CASE("reference weight quantisers stay within 1.01x of ggml's relative RMSE", "[kernels][quantize]") {
  LES_REQUIRE_FIXTURE(xpath, "quant/input_4x512.f32");
  LES_REQUIRE_FIXTURE(impath, "quant/imatrix_512.f32");
  LES_REQUIRE_FIXTURE(mpath, "quant/manifest.json");
  const auto x = les::test::read_file_f32(xpath);
  const auto imatrix = les::test::read_file_f32(impath);
  const auto mbytes = les::test::read_file_bytes(mpath);
  const std::string manifest(mbytes.begin(), mbytes.end());
  REQUIRE(x.size() == static_cast<size_t>(kRows * kCols));
  REQUIRE(imatrix.size() == static_cast<size_t>(kCols));
  KernelTable table;
  fill_scalar_table(table);

  for (const Case& c : kCases) {
    for (const bool with_imatrix : {false, true}) {
      if (with_imatrix && c.type == GgmlType::Q8_0) continue;  // ggml ignores the imatrix for Q8_0
      const std::string stem = std::string(c.stem) + (with_imatrix ? "_imatrix" : "");
      DYNAMIC_SECTION(stem) {
        const bool committed = c.type == GgmlType::IQ4_XS || c.type == GgmlType::MXFP4;
        const auto ggml = committed ? committed_rel_rmse(stem) : manifest_rel_rmse(manifest, stem + ".qbytes");
        const size_t row_bytes = *les::ggml_row_bytes(c.type, kCols);
        std::vector<uint8_t> q(row_bytes);
        std::vector<float> back(kCols);
        for (int64_t r = 0; r < kRows; ++r) {
          const float* xr = x.data() + r * kCols;
          quantizer(c.type)(xr, q.data(), kCols, with_imatrix ? imatrix.data() : nullptr);
          table.of(c.type).dequantize_row(q.data(), back.data(), kCols);
          double se = 0, ss = 0;
          for (int64_t i = 0; i < kCols; ++i) {
            se += (static_cast<double>(back[i]) - xr[i]) * (static_cast<double>(back[i]) - xr[i]);
            ss += static_cast<double>(xr[i]) * xr[i];
          }
          const double rel = std::sqrt(se / ss);
          std::printf("%-16s row %lld: rel rmse %.5f  ggml %.5f  ratio %.3f\n", stem.c_str(),
                      static_cast<long long>(r), rel, ggml[r], rel / ggml[r]);
          INFO(stem << " row " << r << ": rel rmse " << rel << " vs ggml " << ggml[r]);
          CHECK(rel <= kAllowedRatio * ggml[r]);
        }
      }
    }
  }
}

TEST_CASE("reference weight quantisers handle zero, constant and zero-importance rows", "[kernels][quantize]") {
  KernelTable table;
  fill_scalar_table(table);
  const int64_t n = 512;
  std::vector<float> zeros(n, 0.0f), constant(n, -0.75f), no_importance(n, 0.0f), ramp(n);
  for (int64_t i = 0; i < n; ++i) ramp[i] = static_cast<float>(i % 64) - 20.0f;
  for (const Case& c : kCases) {
    DYNAMIC_SECTION(c.stem) {
      std::vector<uint8_t> q(*les::ggml_row_bytes(c.type, n));
      std::vector<float> back(n);
      // All zero: decodes to exactly zero.
      quantizer(c.type)(zeros.data(), q.data(), n, nullptr);
      table.of(c.type).dequantize_row(q.data(), back.data(), n);
      for (float v : back) CHECK(v == 0.0f);
      // Constant: finite, and within 1/8 of the value (every format has a level near it).
      quantizer(c.type)(constant.data(), q.data(), n, nullptr);
      table.of(c.type).dequantize_row(q.data(), back.data(), n);
      for (float v : back) CHECK(std::fabs(v + 0.75f) <= 0.75f / 8);
      // All-zero importance: still a sensible (finite, bounded) quantisation.
      quantizer(c.type)(ramp.data(), q.data(), n, no_importance.data());
      table.of(c.type).dequantize_row(q.data(), back.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        REQUIRE(std::isfinite(back[i]));
        CHECK(std::fabs(back[i]) <= 2.0f * 43.0f);
      }
    }
  }
}

TEST_CASE("Q4_0 and Q8_0 weight quantisers reproduce representable rows exactly", "[kernels][quantize]") {
  // x = 0.25 * code with every code of the format used in each block: the
  // least-squares scale is exactly 0.25 and every code is recovered.
  std::vector<float> x4(64), x8(64);
  for (int i = 0; i < 64; ++i) {
    x4[i] = 0.25f * static_cast<float>((i * 7) % 16 - 8);
    x8[i] = 0.25f * static_cast<float>(i % 32 == 0 ? -127 : i % 32 == 1 ? 127 : (i * 37) % 255 - 127);
  }
  les::block_q4_0 b4[2];
  quantize_row_q4_0_ref(x4.data(), b4, 64, nullptr);
  les::block_q8_0 b8[2];
  quantize_row_q8_0_weights_ref(x8.data(), b8, 64, nullptr);
  std::vector<float> y4(64), y8(64);
  dequantize_row_q4_0_ref(b4, y4.data(), 64);
  dequantize_row_q8_0_ref(b8, y8.data(), 64);
  CHECK(y4 == x4);
  CHECK(y8 == x8);
}

TEST_CASE("reference_weight_quantizer covers the producible types only", "[kernels][quantize]") {
  CHECK(reference_weight_quantizer(GgmlType::Q8_K) == nullptr);  // activation-only
  CHECK(reference_weight_quantizer(GgmlType::Q8_1) == nullptr);
  CHECK(reference_weight_quantizer(GgmlType::TQ1_0) == nullptr);
  CHECK(reference_weight_quantizer(GgmlType::IQ1_S) == nullptr);
  CHECK(reference_weight_quantizer(static_cast<GgmlType>(4)) == nullptr);  // removed id
  // F16 ignores the importance and rounds to nearest even.
  const float x[2] = {1.0f, 65504.0f};
  const float imp[2] = {0.0f, 0.0f};
  les::fp16_t h[2];
  reference_weight_quantizer(GgmlType::F16)(x, h, 2, imp);
  CHECK(h[0] == 0x3C00);
  CHECK(h[1] == 0x7BFF);
}

TEST_CASE("a NaN or inf in one block leaves every other block of the row unchanged", "[kernels][quantize]") {
  const int64_t n = 1024;
  std::vector<float> clean(n);
  for (int64_t i = 0; i < n; ++i) clean[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f;
  for (const Case& c : kCases) {
    DYNAMIC_SECTION(c.stem) {
      const int64_t bs = les::ggml_type_traits(c.type).block_size;
      const size_t bb = les::ggml_type_traits(c.type).block_bytes;
      std::vector<uint8_t> ref(*les::ggml_row_bytes(c.type, n)), got(ref.size());
      quantizer(c.type)(clean.data(), ref.data(), n, nullptr);
      for (const float bad : {std::nanf(""), std::numeric_limits<float>::infinity()}) {
        std::vector<float> x = clean;
        x[bs + 3] = bad;  // inside block 1
        quantizer(c.type)(x.data(), got.data(), n, nullptr);
        CHECK(std::equal(got.begin(), got.begin() + bb, ref.begin()));             // block 0
        CHECK(std::equal(got.begin() + 2 * bb, got.end(), ref.begin() + 2 * bb));  // blocks 2..
      }
    }
  }
}
