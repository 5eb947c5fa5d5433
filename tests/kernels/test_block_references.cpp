// Block decoding against llama.cpp: tests/kernels/data/<stem>.qbytes holds
// random and adversarial blocks of one format (every scale, sign, code and
// exponent), <stem>.dequant.f32 what llama.cpp's gguf-py decodes them to
// (gen_block_references.py; its decoders follow ggml-quants.c's formulas one
// F32 operation at a time, and were checked against ggml's own to_float).
// The scalar reference must give those bits, and every SIMD tier's
// dequantize_row the scalar reference's. NaN results (blocks whose F16 scale is
// NaN or whose scale is inf times a zero code) only have to be NaN: x86 and
// ARM produce different NaN payloads.
//
// The references are committed, so this runs in CI and under qemu without
// llama.cpp or shared/fixtures. To add a format: a generator in
// gen_block_references.py and a row in kFormats.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_tiers.h"
#include "kernels/ggml_type.h"
#include "kernels/kernels.h"
#include "quant_fixture.h"
#include "support/fixtures.h"

namespace {

using les::GgmlType;
using namespace les::kernels;

struct Format {
  const char* stem;
  GgmlType type;
};

constexpr Format kFormats[] = {
    {"iq4_xs", GgmlType::IQ4_XS},
    {"mxfp4", GgmlType::MXFP4},
    {"tq1_0", GgmlType::TQ1_0},
    {"tq2_0", GgmlType::TQ2_0},
};

std::string data_path(const std::string& file) { return std::string(LES_TESTS_SOURCE_DIR) + "/kernels/data/" + file; }

// Index of the first value whose bits differ (NaN matches any NaN), or -1.
int64_t first_mismatch(const std::vector<float>& got, const std::vector<float>& want) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    if (les::test::f32_bits(got[i]) != les::test::f32_bits(want[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

TEST_CASE("scalar block decoding is bit-exact with llama.cpp's on random and adversarial blocks",
          "[kernels][dequantize][references]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  for (const Format& f : kFormats) {
    DYNAMIC_SECTION(f.stem) {
      const auto q = les::test::read_file_bytes(data_path(std::string(f.stem) + ".qbytes"));
      const auto want = les::test::read_file_f32(data_path(std::string(f.stem) + ".dequant.f32"));
      const auto traits = les::ggml_type_traits(f.type);
      REQUIRE(q.size() % traits.block_bytes == 0);
      const int64_t n = static_cast<int64_t>(q.size() / traits.block_bytes) * traits.block_size;
      REQUIRE(want.size() == static_cast<size_t>(n));
      REQUIRE(scalar.of(f.type).dequantize_row != nullptr);
      std::vector<float> got(n, -12345.0f);
      scalar.of(f.type).dequantize_row(q.data(), got.data(), n);
      const int64_t bad = first_mismatch(got, want);
      INFO("first mismatch at element " << bad << " (block " << bad / traits.block_size << "): got "
                                        << (bad >= 0 ? got[bad] : 0.0f) << " want " << (bad >= 0 ? want[bad] : 0.0f));
      CHECK(bad == -1);
    }
  }
}

TEST_CASE("every tier's dequantize_row gives the scalar reference's bits", "[kernels][dequantize][simd]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  const auto tables = les::test::simd_tables();
  if (tables.empty()) les::test::mark_skipped("no SIMD tier runs on this machine");
  for (const KernelTable* table : tables) {
    for (const Format& f : kFormats) {
      const auto q = les::test::read_file_bytes(data_path(std::string(f.stem) + ".qbytes"));
      const auto traits = les::ggml_type_traits(f.type);
      const int64_t n = static_cast<int64_t>(q.size() / traits.block_bytes) * traits.block_size;
      std::vector<float> want(n), got(n + 1, -12345.0f);
      scalar.of(f.type).dequantize_row(q.data(), want.data(), n);
      // Rows of one block up to the whole file, 4 bytes off a 32-byte
      // boundary: the blocks' natural alignment (alignof <= 4), misaligned for
      // every vector load (17-byte MXFP4 blocks start at every offset anyway).
      std::vector<uint8_t> storage(q.size() + 64);
      uint8_t* src = storage.data() + (32 - reinterpret_cast<uintptr_t>(storage.data()) % 32) % 32 + 4;
      std::memcpy(src, q.data(), q.size());
      for (int64_t blocks : {int64_t{1}, int64_t{3}, n / traits.block_size}) {
        const int64_t len = blocks * traits.block_size;
        table->of(f.type).dequantize_row(src, got.data(), len);
        std::vector<float> head(got.begin(), got.begin() + len), ref(want.begin(), want.begin() + len);
        const int64_t bad = first_mismatch(head, ref);
        INFO("tier " << kernel_tier_name(table->tier) << " " << f.stem << " row of " << blocks
                     << " blocks: first mismatch at " << bad);
        CHECK(bad == -1);
        CHECK(got[len] == -12345.0f);  // nothing written past the row
      }
    }
  }
}
