#include "core/gguf/gguf_value.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace les::gguf {
namespace {

bool is_unsigned_type(ValueType t) noexcept {
  return t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 || t == ValueType::UINT64;
}
bool is_signed_type(ValueType t) noexcept {
  return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 || t == ValueType::INT64;
}
bool is_float_type(ValueType t) noexcept { return t == ValueType::FLOAT32 || t == ValueType::FLOAT64; }

// Largest integer magnitude a double holds exactly (2^53).
constexpr uint64_t kMaxExactDouble = uint64_t{1} << 53;

template <typename T>
T load_le(const uint8_t* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));  // the host is little-endian (checked in gguf_reader.cpp)
  return v;
}

}  // namespace

const char* value_type_name(ValueType t) noexcept {
  switch (t) {
    case ValueType::UINT8: return "UINT8";
    case ValueType::INT8: return "INT8";
    case ValueType::UINT16: return "UINT16";
    case ValueType::INT16: return "INT16";
    case ValueType::UINT32: return "UINT32";
    case ValueType::INT32: return "INT32";
    case ValueType::FLOAT32: return "FLOAT32";
    case ValueType::BOOL: return "BOOL";
    case ValueType::STRING: return "STRING";
    case ValueType::ARRAY: return "ARRAY";
    case ValueType::UINT64: return "UINT64";
    case ValueType::INT64: return "INT64";
    case ValueType::FLOAT64: return "FLOAT64";
  }
  return "?";
}

size_t value_type_size(ValueType t) noexcept {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL: return 1;
    case ValueType::UINT16:
    case ValueType::INT16: return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32: return 4;
    case ValueType::UINT64:
    case ValueType::INT64:
    case ValueType::FLOAT64: return 8;
    case ValueType::STRING:
    case ValueType::ARRAY: return 0;
  }
  return 0;
}

Value Value::from_uint(ValueType t, uint64_t v) {
  Value r;
  r.type_ = is_unsigned_type(t) ? t : ValueType::UINT64;
  r.u_ = v;
  return r;
}

Value Value::from_int(ValueType t, int64_t v) {
  Value r;
  r.type_ = is_signed_type(t) ? t : ValueType::INT64;
  r.i_ = v;
  return r;
}

Value Value::from_float(ValueType t, double v) {
  Value r;
  r.type_ = is_float_type(t) ? t : ValueType::FLOAT64;
  r.f_ = r.type_ == ValueType::FLOAT32 ? static_cast<double>(static_cast<float>(v)) : v;
  return r;
}

Value Value::from_bool(bool v) {
  Value r;
  r.type_ = ValueType::BOOL;
  r.u_ = v ? 1 : 0;
  return r;
}

Value Value::from_string(std::string v) {
  Value r;
  r.type_ = ValueType::STRING;
  r.s_ = std::move(v);
  return r;
}

Value Value::from_array(Array a) {
  Value r;
  r.type_ = ValueType::ARRAY;
  r.a_ = std::make_shared<const Array>(std::move(a));
  return r;
}

std::optional<uint64_t> Value::as_uint() const noexcept {
  if (is_unsigned_type(type_)) return u_;
  if (is_signed_type(type_) && i_ >= 0) return static_cast<uint64_t>(i_);
  return std::nullopt;
}

std::optional<int64_t> Value::as_int() const noexcept {
  if (is_signed_type(type_)) return i_;
  if (is_unsigned_type(type_) && u_ <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return static_cast<int64_t>(u_);
  return std::nullopt;
}

std::optional<double> Value::as_float() const noexcept {
  if (is_float_type(type_)) return f_;
  if (is_unsigned_type(type_) && u_ <= kMaxExactDouble) return static_cast<double>(u_);
  if (is_signed_type(type_) && i_ <= static_cast<int64_t>(kMaxExactDouble) &&
      i_ >= -static_cast<int64_t>(kMaxExactDouble))
    return static_cast<double>(i_);
  return std::nullopt;
}

std::optional<bool> Value::as_bool() const noexcept {
  if (type_ == ValueType::BOOL) return u_ != 0;
  return std::nullopt;
}

const std::string* Value::as_string() const noexcept { return type_ == ValueType::STRING ? &s_ : nullptr; }

const Array* Value::as_array() const noexcept { return type_ == ValueType::ARRAY ? a_.get() : nullptr; }

std::optional<Value> Array::value_at(uint64_t i) const {
  if (i >= count) return std::nullopt;
  if (!is_packed_type(elem_type)) {
    if (i >= items.size()) return std::nullopt;
    return items[i];
  }
  const size_t sz = value_type_size(elem_type);
  if (sz == 0 || packed.size() / sz <= i) return std::nullopt;
  const uint8_t* p = packed.data() + i * sz;
  switch (elem_type) {
    case ValueType::UINT8: return Value::from_uint(elem_type, load_le<uint8_t>(p));
    case ValueType::UINT16: return Value::from_uint(elem_type, load_le<uint16_t>(p));
    case ValueType::UINT32: return Value::from_uint(elem_type, load_le<uint32_t>(p));
    case ValueType::UINT64: return Value::from_uint(elem_type, load_le<uint64_t>(p));
    case ValueType::INT8: return Value::from_int(elem_type, load_le<int8_t>(p));
    case ValueType::INT16: return Value::from_int(elem_type, load_le<int16_t>(p));
    case ValueType::INT32: return Value::from_int(elem_type, load_le<int32_t>(p));
    case ValueType::INT64: return Value::from_int(elem_type, load_le<int64_t>(p));
    case ValueType::FLOAT32: return Value::from_float(elem_type, load_le<float>(p));
    case ValueType::FLOAT64: return Value::from_float(elem_type, load_le<double>(p));
    case ValueType::BOOL: return Value::from_bool(*p != 0);
    case ValueType::STRING:
    case ValueType::ARRAY: break;
  }
  return std::nullopt;
}

std::optional<double> Array::float_at(uint64_t i) const noexcept {
  if (!is_packed_type(elem_type) || elem_type == ValueType::BOOL) return std::nullopt;
  auto v = value_at(i);
  return v ? v->as_float() : std::nullopt;
}

std::optional<int64_t> Array::int_at(uint64_t i) const noexcept {
  if (!is_packed_type(elem_type) || elem_type == ValueType::BOOL) return std::nullopt;
  auto v = value_at(i);
  return v ? v->as_int() : std::nullopt;
}

std::optional<uint64_t> Array::uint_at(uint64_t i) const noexcept {
  if (!is_packed_type(elem_type) || elem_type == ValueType::BOOL) return std::nullopt;
  auto v = value_at(i);
  return v ? v->as_uint() : std::nullopt;
}

std::optional<bool> Array::bool_at(uint64_t i) const noexcept {
  if (elem_type != ValueType::BOOL || i >= count || i >= packed.size()) return std::nullopt;
  return packed[i] != 0;
}

const std::string* Array::string_at(uint64_t i) const noexcept {
  if (elem_type != ValueType::STRING || i >= count || i >= items.size()) return nullptr;
  return items[i].as_string();
}

bool operator==(const Value& a, const Value& b) noexcept {
  if (a.type() != b.type()) return false;
  const ValueType t = a.type();
  if (is_unsigned_type(t) || t == ValueType::BOOL) return a.raw_uint() == b.raw_uint();
  if (is_signed_type(t)) return a.raw_int() == b.raw_int();
  if (is_float_type(t)) {
    const double x = a.raw_float(), y = b.raw_float();
    return std::memcmp(&x, &y, sizeof(double)) == 0;
  }
  if (t == ValueType::STRING) return *a.as_string() == *b.as_string();
  const Array* x = a.as_array();
  const Array* y = b.as_array();
  if (x == y) return true;
  if (x == nullptr || y == nullptr) return false;
  return *x == *y;
}

bool operator==(const Array& a, const Array& b) noexcept {
  if (a.elem_type != b.elem_type || a.count != b.count) return false;
  if (Array::is_packed_type(a.elem_type)) return a.packed == b.packed;
  if (a.items.size() != b.items.size()) return false;
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!(a.items[i] == b.items[i])) return false;
  return true;
}

}  // namespace les::gguf
