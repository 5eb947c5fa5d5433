// Test helper: a copy of a GGUF file with keys added, replaced or removed
// and tensors converted to another type (for example a fixture model with
// a tokenizer.chat_template, rope.scaling.* keys, or F16 routers), written
// with LES's own GgufWriter. REQUIREs that every step succeeds.
#pragma once

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/gguf/gguf_value.h"
#include "kernels/ggml_type.h"

namespace les::test {

// Writes `dst`: `src`'s keys (those named in `set` replaced) and tensors, plus
// the keys of `set` that `src` lacks.
void copy_gguf_with_strings(const std::string& src, const std::string& dst,
                            const std::vector<std::pair<std::string, std::string>>& set);

// What copy_gguf_edited changes.
struct GgufEdit {
  std::vector<std::pair<std::string, gguf::Value>> set;  // keys added or replaced
  std::vector<std::string> drop;                           // keys removed
  // Tensors whose whole name matches `retype` are converted row by row to
  // `retype_to` with the kernel table's quantize_row (F16, BF16, Q8_0: the
  // rounding llama.cpp's converter and quantiser use), rows of a type other
  // than F32 dequantised to F32 first. Empty: none.
  std::string retype;
  GgmlType retype_to = GgmlType::F32;
};

// Writes `dst`: `src` with `edit` applied.
void copy_gguf_edited(const std::string& src, const std::string& dst, const GgufEdit& edit);

}  // namespace les::test
