#include "core/gguf/gguf_key_rules.h"

#include <fmt/format.h>

namespace les::gguf {
namespace {

struct KeyRule {
  const char* key;
  ValueType type;
  ValueType elem;  // element type for ARRAY keys
};
constexpr KeyRule kKeyRules[] = {
    {"general.alignment", ValueType::UINT32, ValueType::UINT8},
    {"general.architecture", ValueType::STRING, ValueType::UINT8},
    {"general.name", ValueType::STRING, ValueType::UINT8},
    {"tokenizer.ggml.model", ValueType::STRING, ValueType::UINT8},
    {"tokenizer.ggml.pre", ValueType::STRING, ValueType::UINT8},
    {"tokenizer.ggml.tokens", ValueType::ARRAY, ValueType::STRING},
    {"tokenizer.ggml.scores", ValueType::ARRAY, ValueType::FLOAT32},
    {"tokenizer.ggml.token_type", ValueType::ARRAY, ValueType::INT32},
    {"tokenizer.ggml.merges", ValueType::ARRAY, ValueType::STRING},
};

}  // namespace

Status check_well_known_key(std::string_view key, const Value& v) {
  for (const KeyRule& r : kKeyRules) {
    if (key != r.key) continue;
    if (v.type() != r.type)
      return format_error(fmt::format("key '{}' has type {}, expected {}", key, value_type_name(v.type()),
                                      value_type_name(r.type)));
    if (r.type == ValueType::ARRAY && v.as_array()->elem_type != r.elem)
      return format_error(fmt::format("key '{}' is an array of {}, expected an array of {}", key,
                                      value_type_name(v.as_array()->elem_type), value_type_name(r.elem)));
  }
  if (key == "general.alignment") {
    const uint64_t a = v.raw_uint();
    if (a == 0 || (a & (a - 1)) != 0)
      return format_error(fmt::format("key 'general.alignment' = {} is not a power of two", a));
  }
  return {};
}

}  // namespace les::gguf
