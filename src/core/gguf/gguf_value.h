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

  // Raw payloads (for exact comparison / serialisation): the unsigned payload
  // of UINT*/BOOL, the signed payload of INT*, the float payload of FLOAT*.
  uint64_t raw_uint() const noexcept { return u_; }
  int64_t raw_int() const noexcept { return i_; }
  double raw_float() const noexcept { return f_; }

 private:
  ValueType type_ = ValueType::UINT8;
  uint64_t u_ = 0;  // unsigned / bool payload
  int64_t i_ = 0;   // signed payload
  double f_ = 0;    // float payload
  std::string s_;
  std::shared_ptr<const Array> a_;  // shared: values are cheap to copy
};

// An array value: all elements of one type. Arrays of fixed-size elements
// (numbers and BOOL) are stored packed (no per-element Value), which is how
// large token score and type arrays are held; STRING and ARRAY elements are
// Values in `items`.
struct Array {
  ValueType elem_type = ValueType::UINT8;
  std::vector<Value> items;  // for STRING and ARRAY element types (count of them)
  // For numeric and BOOL element types: the raw little-endian elements as in
  // the file, `count` of them, each value_type_size(elem_type) bytes.
  std::vector<uint8_t> packed;
  uint64_t count = 0;

  // True if elements live in `packed` (every type except STRING and ARRAY).
  static bool is_packed_type(ValueType t) noexcept { return t != ValueType::STRING && t != ValueType::ARRAY; }

  // Element i as a double / int64 / uint64 / bool / string; nullopt (or null)
  // if i >= count or the element type does not convert exactly (same rules as
  // Value's accessors: float_at accepts integers, uint_at rejects negatives).
  std::optional<double> float_at(uint64_t i) const noexcept;
  std::optional<int64_t> int_at(uint64_t i) const noexcept;
  std::optional<uint64_t> uint_at(uint64_t i) const noexcept;
  std::optional<bool> bool_at(uint64_t i) const noexcept;
  const std::string* string_at(uint64_t i) const noexcept;
  // Element i as a Value (any element type); nullopt if i >= count.
  std::optional<Value> value_at(uint64_t i) const;
};

// Structural equality: same type and same payload (floats compared bitwise,
// so NaN == NaN with identical bits; arrays element by element). Used by
// round-trip tests and the writer.
bool operator==(const Value& a, const Value& b) noexcept;
bool operator==(const Array& a, const Array& b) noexcept;

// Size in bytes of a fixed-size value type (0 for STRING and ARRAY).
size_t value_type_size(ValueType t) noexcept;

struct KeyValue {
  std::string key;
  Value value;
};

}  // namespace les::gguf
