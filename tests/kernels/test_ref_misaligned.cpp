// The scalar reference kernels (the scalar tier, and the fallback of every SIMD
// tier for what it does not override) read and write rows at any byte address:
// each kernel run on a row placed at odd offsets gives the same bytes as on an
// aligned row. Under UBSan (-fsanitize=alignment) this also checks that no
// typed access to a misaligned F16 / block field remains (ref.h, unaligned.h).

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/tiers.h"
#include "kernels/weight_quantizers.h"
#include "random_blocks.h"

namespace {

using les::GgmlType;
using les::kernels::KernelTable;

constexpr size_t kOffsets[] = {1, 3, 17};

// A copy of `bytes` starting `off` bytes into a fresh buffer (whose data() is
// malloc-aligned, so data() + off is misaligned for every off above).
std::vector<uint8_t> shifted(const std::vector<uint8_t>& bytes, size_t off) {
  std::vector<uint8_t> buf(bytes.size() + off + 8, 0xCD);
  std::memcpy(buf.data() + off, bytes.data(), bytes.size());
  return buf;
}

std::vector<float> random_floats(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = nd(rng);
  return x;
}

}  // namespace

TEST_CASE("scalar vec_dot and dequantize_row give the same bits from misaligned rows", "[kernels][ref]") {
  KernelTable scalar;
  les::kernels::fill_scalar_table(scalar);
  std::mt19937 rng(2024);
  const int64_t n = 512;
  for (GgmlType t : les::test::dot_weight_types()) {
    INFO("type " << les::ggml_type_name(t));
    const auto w = les::test::random_weights(scalar, t, 1, n, les::test::ScaleMode::normal, rng);
    const auto x = les::test::random_activations(scalar, t, 1, n, 1.0f, rng);
    float s_aligned = 0;
    scalar.of(t).vec_dot(n, &s_aligned, w.data(), x.data());
    std::vector<float> deq_aligned(n);
    scalar.of(t).dequantize_row(w.data(), deq_aligned.data(), n);
    for (size_t off : kOffsets) {
      INFO("offset " << off);
      const auto wb = shifted(w, off), xb = shifted(x, off + 1);
      float s = 0;
      scalar.of(t).vec_dot(n, &s, wb.data() + off, xb.data() + off + 1);
      CHECK(std::memcmp(&s, &s_aligned, 4) == 0);
      std::vector<float> deq(n);
      scalar.of(t).dequantize_row(wb.data() + off, deq.data(), n);
      CHECK(std::memcmp(deq.data(), deq_aligned.data(), n * 4) == 0);
    }
  }
}

TEST_CASE("scalar activation quantisers write the same bytes to misaligned rows", "[kernels][ref]") {
  KernelTable scalar;
  les::kernels::fill_scalar_table(scalar);
  std::mt19937 rng(77);
  const int64_t n = 512;
  const auto x = random_floats(n, rng);
  for (GgmlType act : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K, GgmlType::F16, GgmlType::BF16, GgmlType::F32}) {
    INFO("type " << les::ggml_type_name(act));
    const size_t rb = *les::ggml_row_bytes(act, n);
    std::vector<uint8_t> aligned(rb);
    scalar.of(act).quantize_row(x.data(), aligned.data(), n);
    for (size_t off : kOffsets) {
      INFO("offset " << off);
      std::vector<uint8_t> buf(rb + off + 8, 0xCD);
      scalar.of(act).quantize_row(x.data(), buf.data() + off, n);
      CHECK(std::memcmp(buf.data() + off, aligned.data(), rb) == 0);
      CHECK(buf[off - 1] == 0xCD);       // nothing written before the row
      CHECK(buf[off + rb] == 0xCD);      // nor after it
    }
  }
}

TEST_CASE("reference weight quantisers write the same bytes to misaligned rows", "[kernels][ref]") {
  std::mt19937 rng(78);
  const int64_t n = 256;
  const auto x = random_floats(n, rng);
  for (GgmlType t : les::test::dot_weight_types()) {
    INFO("type " << les::ggml_type_name(t));
    const auto quantize = les::kernels::reference_weight_quantizer(t);
    // The dot types LES reads but does not write: IQ1_S, IQ1_M, TQ1_0, TQ2_0.
    if (t == GgmlType::IQ1_S || t == GgmlType::IQ1_M || t == GgmlType::TQ1_0 || t == GgmlType::TQ2_0) {
      CHECK(quantize == nullptr);
      CHECK_FALSE(les::kernels::weight_quantizer_available(t));
      continue;
    }
    REQUIRE(quantize != nullptr);
    const size_t rb = *les::ggml_row_bytes(t, n);
    std::vector<uint8_t> aligned(rb);
    quantize(x.data(), aligned.data(), n, nullptr);
    for (size_t off : {size_t{1}, size_t{3}}) {
      INFO("offset " << off);
      std::vector<uint8_t> buf(rb + off + 8, 0xCD);
      quantize(x.data(), buf.data() + off, n, nullptr);
      CHECK(std::memcmp(buf.data() + off, aligned.data(), rb) == 0);
    }
  }
}
