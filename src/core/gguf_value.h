// GGUF metadata values: the 13 value types of the GGUF spec, including arrays
// (which may nest).
//
// Source: GGUF specification (ggml docs/gguf.md), "gguf_metadata_value_type".
// Thread-safety: plain values; immutable after parsing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace les::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;

// "UINT32", "ARRAY", ...; "?" for unknown ids.
const char* value_type_name(ValueType t) noexcept;

struct Array;

// One metadata value. Integers keep their declared type; accessors convert
// where the conversion is exact (a UINT8 3 reads as as_uint() == 3) and return
// nullopt otherwise (a negative INT32 has no as_uint()).
class Value {
 public:
  Value() = default;
  static Value from_uint(ValueType t, uint64_t v);
  static Value from_int(ValueType t, int64_t v);
  static Value from_float(ValueType t, double v);
  static Value from_bool(bool v);
  static Value from_string(std::string v);
  static Value from_array(Array a);

  ValueType type() const noexcept { return type_; }

  std::optional<uint64_t> as_uint() const noexcept;  // any integer type, value >= 0
  std::optional<int64_t> as_int() const noexcept;    // any integer type, value fits int64
  std::optional<double> as_float() const noexcept;   // FLOAT32/FLOAT64 (and integers, exactly converted)
  std::optional<bool> as_bool() const noexcept;      // BOOL only
  const std::string* as_string() const noexcept;     // STRING only, else null
  const Array* as_array() const noexcept;            // ARRAY only, else null

 private:
  ValueType type_ = ValueType::UINT8;
  uint64_t u_ = 0;  // unsigned / bool payload
  int64_t i_ = 0;   // signed payload
  double f_ = 0;    // float payload
  std::string s_;
  std::shared_ptr<const Array> a_;  // shared: values are cheap to copy
};

// An array value: all elements of one type. For arrays of numbers the elements
// are also available packed (no per-element Value), which is how large token
// score and type arrays are stored.
struct Array {
  ValueType elem_type = ValueType::UINT8;
  std::vector<Value> items;  // for STRING, ARRAY and BOOL element types
  // For numeric element types: the raw little-endian elements as in the file,
  // `count` of them, each value_type_size(elem_type) bytes.
  std::vector<uint8_t> packed;
  uint64_t count = 0;

  // Element i as a double / int64 / string (nullopt or null if the type does not fit).
  std::optional<double> float_at(uint64_t i) const noexcept;
  std::optional<int64_t> int_at(uint64_t i) const noexcept;
  const std::string* string_at(uint64_t i) const noexcept;
};

// Size in bytes of a fixed-size value type (0 for STRING and ARRAY).
size_t value_type_size(ValueType t) noexcept;

struct KeyValue {
  std::string key;
  Value value;
};

}  // namespace les::gguf
