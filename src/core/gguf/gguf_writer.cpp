#include "core/gguf/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/gguf/gguf_key_rules.h"

namespace les::gguf {
namespace {

constexpr uint64_t kMaxKeyBytes = 65535;
constexpr uint64_t kMaxTensorNameBytes = 64;
constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kVersion = 3;

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian host (asserted in gguf_reader.cpp)
  out.insert(out.end(), b, b + sizeof(T));
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void put_value(std::vector<uint8_t>& out, const Value& v) {
  switch (v.type()) {
    case ValueType::UINT8: put<uint8_t>(out, static_cast<uint8_t>(v.raw_uint())); return;
    case ValueType::UINT16: put<uint16_t>(out, static_cast<uint16_t>(v.raw_uint())); return;
    case ValueType::UINT32: put<uint32_t>(out, static_cast<uint32_t>(v.raw_uint())); return;
    case ValueType::UINT64: put<uint64_t>(out, v.raw_uint()); return;
    case ValueType::INT8: put<int8_t>(out, static_cast<int8_t>(v.raw_int())); return;
    case ValueType::INT16: put<int16_t>(out, static_cast<int16_t>(v.raw_int())); return;
    case ValueType::INT32: put<int32_t>(out, static_cast<int32_t>(v.raw_int())); return;
    case ValueType::INT64: put<int64_t>(out, v.raw_int()); return;
    case ValueType::FLOAT32: put<float>(out, static_cast<float>(v.raw_float())); return;
    case ValueType::FLOAT64: put<double>(out, v.raw_float()); return;
    case ValueType::BOOL: put<uint8_t>(out, v.raw_uint() != 0 ? 1 : 0); return;
    case ValueType::STRING: put_string(out, *v.as_string()); return;
    case ValueType::ARRAY: {
      const Array& a = *v.as_array();
      put<uint32_t>(out, static_cast<uint32_t>(a.elem_type));
      put<uint64_t>(out, a.count);
      if (Array::is_packed_type(a.elem_type)) {
        out.insert(out.end(), a.packed.begin(), a.packed.end());
      } else {
        for (const Value& e : a.items) put_value(out, e);
      }
      return;
    }
  }
}

// Checks that an array value is self-consistent and not nested too deeply.
Status check_value(std::string_view key, const Value& v, int depth) {
  const Array* a = v.as_array();
  if (a == nullptr) return {};
  if (depth >= kMaxArrayDepth)
    return invalid_argument_error(fmt::format("key '{}': arrays nested deeper than {}", key, kMaxArrayDepth));
  if (static_cast<uint32_t>(a->elem_type) >= kValueTypeCount)
    return invalid_argument_error(fmt::format("key '{}': unknown array element type", key));
  if (Array::is_packed_type(a->elem_type)) {
    const uint64_t sz = value_type_size(a->elem_type);
    if (a->count > a->packed.size() / sz || a->packed.size() != a->count * sz || !a->items.empty())
      return invalid_argument_error(fmt::format("key '{}': array of {} holds {} packed bytes for {} elements", key,
                                                value_type_name(a->elem_type), a->packed.size(), a->count));
    if (a->elem_type == ValueType::BOOL)
      for (uint8_t b : a->packed)
        if (b > 1) return invalid_argument_error(fmt::format("key '{}': BOOL array byte {} is not 0 or 1", key, b));
    return {};
  }
  if (a->items.size() != a->count || !a->packed.empty())
    return invalid_argument_error(fmt::format("key '{}': array of {} has {} items for count {}", key,
                                              value_type_name(a->elem_type), a->items.size(), a->count));
  for (const Value& e : a->items) {
    if (e.type() != a->elem_type)
      return invalid_argument_error(fmt::format("key '{}': array of {} holds a {}", key, value_type_name(a->elem_type),
                                                value_type_name(e.type())));
    LES_RETURN_IF_ERROR(check_value(key, e, depth + 1));
  }
  return {};
}

bool is_integer_type(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::UINT16: case ValueType::INT16:
    case ValueType::UINT32: case ValueType::INT32: case ValueType::UINT64: case ValueType::INT64: return true;
    default: return false;
  }
}

// Range of an integer type as [lo, hi] in int64 / uint64 terms.
bool int_fits(ValueType t, int64_t v) {
  switch (t) {
    case ValueType::UINT8: return v >= 0 && v <= 0xff;
    case ValueType::UINT16: return v >= 0 && v <= 0xffff;
    case ValueType::UINT32: return v >= 0 && v <= 0xffffffffLL;
    case ValueType::UINT64: return v >= 0;
    case ValueType::INT8: return v >= -128 && v <= 127;
    case ValueType::INT16: return v >= -32768 && v <= 32767;
    case ValueType::INT32: return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    case ValueType::INT64: return true;
    default: return false;
  }
}

void put_int_as(std::vector<uint8_t>& out, ValueType t, int64_t v) {
  switch (t) {
    case ValueType::UINT8: put<uint8_t>(out, static_cast<uint8_t>(v)); break;
    case ValueType::UINT16: put<uint16_t>(out, static_cast<uint16_t>(v)); break;
    case ValueType::UINT32: put<uint32_t>(out, static_cast<uint32_t>(v)); break;
    case ValueType::UINT64: put<uint64_t>(out, static_cast<uint64_t>(v)); break;
    case ValueType::INT8: put<int8_t>(out, static_cast<int8_t>(v)); break;
    case ValueType::INT16: put<int16_t>(out, static_cast<int16_t>(v)); break;
    case ValueType::INT32: put<int32_t>(out, static_cast<int32_t>(v)); break;
    case ValueType::INT64: put<int64_t>(out, v); break;
    default: break;
  }
}

Status write_all(int fd, const uint8_t* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return io_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

}  // namespace

Status GgufWriter::set(std::string_view key, Value value) {
  if (key.empty()) return invalid_argument_error("GGUF key is empty");
  if (key.size() > kMaxKeyBytes)
    return invalid_argument_error(fmt::format("GGUF key of {} bytes exceeds {} bytes", key.size(), kMaxKeyBytes));
  LES_RETURN_IF_ERROR(check_value(key, value, 0));
  if (Status s = check_well_known_key(key, value); !s.ok()) return invalid_argument_error(s.message());
  if (key == "general.alignment") alignment_ = value.raw_uint();
  for (KeyValue& kv : kvs_) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return {};
    }
  }
  kvs_.push_back({std::string(key), std::move(value)});
  return {};
}

Status GgufWriter::set_array_strings(std::string_view key, const std::vector<std::string>& values) {
  Array a;
  a.elem_type = ValueType::STRING;
  a.count = values.size();
  a.items.reserve(values.size());
  for (const std::string& s : values) a.items.push_back(Value::from_string(s));
  return set(key, Value::from_array(std::move(a)));
}

Status GgufWriter::set_array_bools(std::string_view key, const std::vector<bool>& values) {
  Array a;
  a.elem_type = ValueType::BOOL;
  a.count = values.size();
  for (bool b : values) a.packed.push_back(b ? 1 : 0);
  return set(key, Value::from_array(std::move(a)));
}

Status GgufWriter::set_array_ints(std::string_view key, ValueType elem_type, std::span<const int64_t> values) {
  if (!is_integer_type(elem_type))
    return invalid_argument_error(fmt::format("key '{}': {} is not an integer type", key, value_type_name(elem_type)));
  Array a;
  a.elem_type = elem_type;
  a.count = values.size();
  for (size_t i = 0; i < values.size(); ++i) {
    if (!int_fits(elem_type, values[i]))
      return invalid_argument_error(
          fmt::format("key '{}'[{}]: {} does not fit in {}", key, i, values[i], value_type_name(elem_type)));
    put_int_as(a.packed, elem_type, values[i]);
  }
  return set(key, Value::from_array(std::move(a)));
}

Status GgufWriter::set_array_numbers(std::string_view key, ValueType elem_type, std::span<const double> values) {
  Array a;
  a.elem_type = elem_type;
  a.count = values.size();
  if (elem_type == ValueType::FLOAT32) {
    for (double v : values) put<float>(a.packed, static_cast<float>(v));
  } else if (elem_type == ValueType::FLOAT64) {
    for (double v : values) put<double>(a.packed, v);
  } else if (is_integer_type(elem_type)) {
    for (size_t i = 0; i < values.size(); ++i) {
      const double v = values[i];
      // Integers must be exact and inside int64 (UINT64 values above 2^63 need set()).
      if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0) || std::trunc(v) != v ||
          !int_fits(elem_type, static_cast<int64_t>(v)))
        return invalid_argument_error(
            fmt::format("key '{}'[{}]: {} is not representable as {}", key, i, v, value_type_name(elem_type)));
      put_int_as(a.packed, elem_type, static_cast<int64_t>(v));
    }
  } else {
    return invalid_argument_error(fmt::format("key '{}': {} is not a number type", key, value_type_name(elem_type)));
  }
  return set(key, Value::from_array(std::move(a)));
}

Status GgufWriter::set_alignment(uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > (uint64_t{1} << 31))
    return invalid_argument_error(fmt::format("alignment {} is not a power of two in 1..2^31", alignment));
  return set_u32("general.alignment", static_cast<uint32_t>(alignment));
}

Result<uint64_t> checked_tensor_bytes(std::string_view name, GgmlType type, std::span<const int64_t> ne) {
  const std::string ctx = fmt::format("tensor '{}'", name);
  if (name.empty()) return invalid_argument_error("tensor name is empty");
  if (name.size() > kMaxTensorNameBytes)
    return invalid_argument_error(fmt::format("{}: name of {} bytes exceeds {}", ctx, name.size(), kMaxTensorNameBytes));
  if (ne.empty() || ne.size() > 4)
    return invalid_argument_error(fmt::format("{}: {} dimensions, expected 1..4", ctx, ne.size()));
  const auto traits = ggml_type_traits(static_cast<uint32_t>(type));
  if (!traits) return invalid_argument_error(fmt::format("{}: unknown ggml type {}", ctx, static_cast<uint32_t>(type)));
  uint64_t n_rows = 1;
  uint64_t n_elements = 1;
  for (size_t d = 0; d < ne.size(); ++d) {
    if (ne[d] <= 0) return invalid_argument_error(fmt::format("{}: ne[{}] = {} is not positive", ctx, d, ne[d]));
    if (__builtin_mul_overflow(n_elements, static_cast<uint64_t>(ne[d]), &n_elements) ||
        n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return invalid_argument_error(fmt::format("{}: element count overflows", ctx));
    if (d > 0) n_rows *= static_cast<uint64_t>(ne[d]);
  }
  if (ne[0] % traits->block_size != 0)
    return invalid_argument_error(fmt::format("{}: ne[0] = {} is not a multiple of the {} block size {}", ctx, ne[0],
                                              traits->name, traits->block_size));
  uint64_t row = 0, expect = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(ne[0] / traits->block_size), traits->block_bytes, &row) ||
      __builtin_mul_overflow(row, n_rows, &expect))
    return invalid_argument_error(fmt::format("{}: byte size overflows", ctx));
  return expect;
}

std::vector<uint64_t> layout_tensor_offsets(const std::vector<TensorHeader>& tensors, uint64_t alignment,
                                            uint64_t* data_bytes) {
  std::vector<uint64_t> off;
  off.reserve(tensors.size());
  uint64_t pos = 0;
  for (const TensorHeader& t : tensors) {
    off.push_back(pos);
    pos += (t.n_bytes + alignment - 1) / alignment * alignment;
  }
  if (data_bytes != nullptr) *data_bytes = pos;
  return off;
}

std::vector<uint8_t> encode_gguf_header(const std::vector<KeyValue>& kvs, const std::vector<TensorHeader>& tensors,
                                        const std::vector<uint64_t>& offsets, uint64_t alignment) {
  std::vector<uint8_t> out;
  out.reserve(4096);
  put<uint32_t>(out, 0x46554747);  // "GGUF" as a little-endian u32
  put<uint32_t>(out, kVersion);
  put<uint64_t>(out, tensors.size());
  put<uint64_t>(out, kvs.size());
  for (const KeyValue& kv : kvs) {
    put_string(out, kv.key);
    put<uint32_t>(out, static_cast<uint32_t>(kv.value.type()));
    put_value(out, kv.value);
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorHeader& t = tensors[i];
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
    for (int64_t n : t.ne) put<uint64_t>(out, static_cast<uint64_t>(n));
    put<uint32_t>(out, static_cast<uint32_t>(t.type));
    put<uint64_t>(out, offsets[i]);
  }
  // With no tensors there is no data section and no padding (llama.cpp's vocab-only files end here).
  if (!tensors.empty()) out.resize((out.size() + alignment - 1) / alignment * alignment, 0);
  return out;
}

Status GgufWriter::add_tensor(std::string_view name, GgmlType type, std::span<const int64_t> ne, const void* data,
                              size_t n_bytes) {
  LES_ASSIGN_OR_RETURN(const uint64_t expect, checked_tensor_bytes(name, type, ne));
  for (const PendingTensor& t : tensors_)
    if (t.name == name) return invalid_argument_error(fmt::format("tensor '{}': duplicate tensor name", name));
  if (n_bytes != expect)
    return invalid_argument_error(fmt::format("tensor '{}': {} data bytes given, {} with this shape needs {}", name,
                                              n_bytes, ggml_type_name(type), expect));
  if (data == nullptr && n_bytes > 0) return invalid_argument_error(fmt::format("tensor '{}': data is null", name));
  PendingTensor t;
  t.name = std::string(name);
  t.type = type;
  t.ne.assign(ne.begin(), ne.end());
  const auto* p = static_cast<const uint8_t*>(data);
  t.data.assign(p, p + n_bytes);
  tensors_.push_back(std::move(t));
  return {};
}

std::vector<TensorHeader> GgufWriter::headers() const {
  std::vector<TensorHeader> h;
  h.reserve(tensors_.size());
  for (const PendingTensor& t : tensors_) h.push_back({t.name, t.type, t.ne, t.data.size()});
  return h;
}

std::vector<uint8_t> GgufWriter::write_to_memory() const {
  const std::vector<TensorHeader> h = headers();
  uint64_t data_bytes = 0;
  const std::vector<uint64_t> off = layout_tensor_offsets(h, alignment_, &data_bytes);
  std::vector<uint8_t> out = encode_gguf_header(kvs_, h, off, alignment_);
  const size_t data_start = out.size();
  // llama.cpp pads the last tensor too; so do we (the file ends aligned).
  out.resize(data_start + data_bytes, 0);
  for (size_t i = 0; i < tensors_.size(); ++i)
    std::memcpy(out.data() + data_start + off[i], tensors_[i].data.data(), tensors_[i].data.size());
  return out;
}

Status GgufWriter::write_to_file(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(fmt::format("cannot create '{}': {}", tmp, std::strerror(errno)));
  const std::vector<TensorHeader> h = headers();
  const std::vector<uint64_t> off = layout_tensor_offsets(h, alignment_, nullptr);
  const std::vector<uint8_t> header = encode_gguf_header(kvs_, h, off, alignment_);
  Status s = write_all(fd, header.data(), header.size(), tmp);
  uint64_t pos = 0;  // within the data section
  static const uint8_t kZeros[64] = {};
  auto pad_to = [&](uint64_t target) -> Status {
    while (pos < target) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(kZeros), target - pos));
      LES_RETURN_IF_ERROR(write_all(fd, kZeros, n, tmp));
      pos += n;
    }
    return {};
  };
  for (size_t i = 0; s.ok() && i < tensors_.size(); ++i) {
    s = pad_to(off[i]);
    if (s.ok()) s = write_all(fd, tensors_[i].data.data(), tensors_[i].data.size(), tmp);
    pos += tensors_[i].data.size();
  }
  if (s.ok() && !tensors_.empty()) s = pad_to((pos + alignment_ - 1) / alignment_ * alignment_);
  if (s.ok() && ::fsync(fd) != 0) s = io_error(fmt::format("cannot fsync '{}': {}", tmp, std::strerror(errno)));
  if (::close(fd) != 0 && s.ok()) s = io_error(fmt::format("cannot close '{}': {}", tmp, std::strerror(errno)));
  if (s.ok() && std::rename(tmp.c_str(), path.c_str()) != 0)
    s = io_error(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, std::strerror(errno)));
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

}  // namespace les::gguf
