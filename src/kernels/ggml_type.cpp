#include "kernels/ggml_type.h"

#include <array>
#include <cctype>
#include <cstring>

namespace les {
namespace {

struct Entry {
  bool known;
  GgmlTypeTraits traits;
};

constexpr std::array<Entry, kGgmlTypeCount> make_table() {
  std::array<Entry, kGgmlTypeCount> t{};
  for (auto& e : t) e = {false, {"?", 0, 0, false}};
  auto set = [&t](GgmlType id, const char* name, int64_t bs, size_t bb, bool q) {
    t[static_cast<uint32_t>(id)] = {true, {name, bs, bb, q}};
  };
  set(GgmlType::F32, "F32", 1, 4, false);
  set(GgmlType::F16, "F16", 1, 2, false);
  set(GgmlType::Q4_0, "Q4_0", 32, 18, true);
  set(GgmlType::Q4_1, "Q4_1", 32, 20, true);
  set(GgmlType::Q5_0, "Q5_0", 32, 22, true);
  set(GgmlType::Q5_1, "Q5_1", 32, 24, true);
  set(GgmlType::Q8_0, "Q8_0", 32, 34, true);
  set(GgmlType::Q8_1, "Q8_1", 32, 36, true);
  set(GgmlType::Q2_K, "Q2_K", 256, 84, true);
  set(GgmlType::Q3_K, "Q3_K", 256, 110, true);
  set(GgmlType::Q4_K, "Q4_K", 256, 144, true);
  set(GgmlType::Q5_K, "Q5_K", 256, 176, true);
  set(GgmlType::Q6_K, "Q6_K", 256, 210, true);
  set(GgmlType::Q8_K, "Q8_K", 256, 292, true);
  set(GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66, true);
  set(GgmlType::IQ2_XS, "IQ2_XS", 256, 74, true);
  set(GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98, true);
  set(GgmlType::IQ1_S, "IQ1_S", 256, 50, true);
  set(GgmlType::IQ4_NL, "IQ4_NL", 32, 18, true);
  set(GgmlType::IQ3_S, "IQ3_S", 256, 110, true);
  set(GgmlType::IQ2_S, "IQ2_S", 256, 82, true);
  set(GgmlType::IQ4_XS, "IQ4_XS", 256, 136, true);
  set(GgmlType::I8, "I8", 1, 1, false);
  set(GgmlType::I16, "I16", 1, 2, false);
  set(GgmlType::I32, "I32", 1, 4, false);
  set(GgmlType::I64, "I64", 1, 8, false);
  set(GgmlType::F64, "F64", 1, 8, false);
  set(GgmlType::IQ1_M, "IQ1_M", 256, 56, true);
  set(GgmlType::BF16, "BF16", 1, 2, false);
  set(GgmlType::TQ1_0, "TQ1_0", 256, 54, true);
  set(GgmlType::TQ2_0, "TQ2_0", 256, 66, true);
  set(GgmlType::MXFP4, "MXFP4", 32, 17, true);
  set(GgmlType::NVFP4, "NVFP4", 64, 36, true);
  set(GgmlType::Q1_0, "Q1_0", 128, 18, true);
  set(GgmlType::Q2_0, "Q2_0", 64, 18, true);
  return t;
}

constexpr auto kTable = make_table();

}  // namespace

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t type_id) noexcept {
  if (type_id >= kGgmlTypeCount || !kTable[type_id].known) return std::nullopt;
  return kTable[type_id].traits;
}

GgmlTypeTraits ggml_type_traits(GgmlType type) noexcept {
  auto id = static_cast<uint32_t>(type);
  if (id >= kGgmlTypeCount) return {"?", 0, 0, false};
  return kTable[id].traits;
}

const char* ggml_type_name(GgmlType type) noexcept { return ggml_type_traits(type).name; }

std::optional<GgmlType> ggml_type_from_name(const char* name) noexcept {
  if (name == nullptr) return std::nullopt;
  for (uint32_t i = 0; i < kGgmlTypeCount; ++i) {
    if (!kTable[i].known) continue;
    const char* a = kTable[i].traits.name;
    const char* b = name;
    while (*a && *b && std::toupper(static_cast<unsigned char>(*a)) == std::toupper(static_cast<unsigned char>(*b))) {
      ++a;
      ++b;
    }
    if (*a == 0 && *b == 0) return static_cast<GgmlType>(i);
  }
  return std::nullopt;
}

std::optional<size_t> ggml_row_bytes(GgmlType type, int64_t n_elements) noexcept {
  auto t = ggml_type_traits(static_cast<uint32_t>(type));
  if (!t || n_elements < 0 || n_elements >= (int64_t{1} << 62)) return std::nullopt;
  if (n_elements % t->block_size != 0) return std::nullopt;
  const uint64_t blocks = static_cast<uint64_t>(n_elements / t->block_size);
  const uint64_t bytes = blocks * t->block_bytes;  // block_bytes <= 292, blocks < 2^62: check
  if (blocks != 0 && bytes / blocks != t->block_bytes) return std::nullopt;
  return static_cast<size_t>(bytes);
}

}  // namespace les
