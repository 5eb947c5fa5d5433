// Tensor element types as numbered in the GGUF format (ggml's `ggml_type`),
// with their block geometry.
//
// Source: the GGUF specification (ggml docs/gguf.md, "GGMLType") and the block
// layouts in ggml's ggml-common.h. Values are part of the file format: never
// renumber. Ids 4, 5 and 31-33, 36-38 were removed from ggml and are unknown.
// Ids up to 42 match ggml 81ff7abe's ggml.h (GGML_TYPE_COUNT 43); a type being
// known here only means its blocks can be sized, not that a kernel exists
// (weight_matmul.h: matmul_type_supported).
//
// Thread-safety: immutable tables; all functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace les {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,  // 64 E2M1 values with four UE4M3 sub-block scales (ggml-common.h block_nvfp4)
  Q1_0 = 41,   // 128 one-bit values and an F16 scale (block_q1_0)
  Q2_0 = 42,   // 64 two-bit values and an F16 scale (block_q2_0)
};

// One past the largest id; sizes per-type lookup tables.
inline constexpr uint32_t kGgmlTypeCount = 43;

// Elements per super-block of the K-quants (QK_K in ggml).
inline constexpr int64_t kQK_K = 256;

struct GgmlTypeTraits {
  const char* name;      // "Q4_K", "F16", ... (ggml's spelling, upper case)
  int64_t block_size;    // elements per block (1 for plain types)
  size_t block_bytes;    // bytes per block
  bool is_quantized;
};

// Traits of a known type id; nullopt for ids that are not (or no longer) ggml types.
std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t type_id) noexcept;

// Same, for a value known to be a valid enum member. Returns {"?",0,0,false} otherwise.
GgmlTypeTraits ggml_type_traits(GgmlType type) noexcept;

// "Q4_K", or "unknown(<id>)" written into a static table entry for unknown ids ("?").
const char* ggml_type_name(GgmlType type) noexcept;

// Parses a type name, case-insensitively ("q4_k", "F16"). nullopt if unknown.
std::optional<GgmlType> ggml_type_from_name(const char* name) noexcept;

// Bytes of one row of `n_elements` elements; nullopt if n is not a multiple of the
// block size or the id is unknown. Overflow-safe for n < 2^62.
std::optional<size_t> ggml_row_bytes(GgmlType type, int64_t n_elements) noexcept;

}  // namespace les
