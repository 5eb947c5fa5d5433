// GGUF writer: builds a GGUF v3 file (the layout documented in
// core/gguf/gguf_reader.h) from metadata values and tensors.
//
// Keys are written in the order they were first set (setting a key again
// replaces its value in place). Tensors are written in the order they were
// added, each at the next multiple of the alignment inside the data section,
// with zero padding; this is the layout llama.cpp writes, so re-writing a
// llama.cpp file reproduces it byte for byte. A file without tensors has no
// data section and ends right after the metadata (no padding), like
// llama.cpp's vocab-only files.
//
// Every setter validates its input (key length, well-known key types, array
// nesting depth, tensor shape/type/size) and returns invalid_argument
// naming what was wrong, so a GgufWriter never produces a file the reader
// rejects.
//
// Tensor bytes are copied at add_tensor(); the caller's buffer may be freed
// afterwards. Memory use is therefore metadata + all tensor bytes.
//
// Thread-safety: thread-compatible (one writer per thread, or external locking).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/gguf/gguf_value.h"
#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les::gguf {

// A tensor's header entry: name, type, shape (ne[0] contiguous) and data size.
struct TensorHeader {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> ne;
  uint64_t n_bytes = 0;
};

// Validates a tensor declaration against the GGUF rules the reader enforces
// (name 1..64 bytes, 1..4 dims each > 0, known type, ne[0] a multiple of the
// block size, no overflow) and returns its data size in bytes. Errors:
// invalid_argument naming the tensor and what was wrong. Duplicate names are
// the caller's check.
Result<uint64_t> checked_tensor_bytes(std::string_view name, GgmlType type, std::span<const int64_t> ne);

// Offsets of each tensor in the data section when laid out in order, each at
// the next multiple of `alignment`; also returns the padded data-section size
// in `*data_bytes` (0 without tensors).
std::vector<uint64_t> layout_tensor_offsets(const std::vector<TensorHeader>& tensors, uint64_t alignment,
                                            uint64_t* data_bytes);

// Everything before the data section: magic, version 3, counts, key/values,
// tensor infos (with `offsets`), zero padding to `alignment` (none when there
// are no tensors).
std::vector<uint8_t> encode_gguf_header(const std::vector<KeyValue>& kvs, const std::vector<TensorHeader>& tensors,
                                        const std::vector<uint64_t>& offsets, uint64_t alignment);

class GgufWriter {
 public:
  GgufWriter() = default;

  // Generic setter: any Value (nested arrays included). Errors: invalid_argument
  // for an empty key, a key longer than 65535 bytes, arrays nested deeper than
  // 8, a BOOL/number array whose packed size disagrees with its count, or a
  // well-known key of the wrong type (see core/gguf/gguf_key_rules.h).
  Status set(std::string_view key, Value value);

  // Typed setters; same errors as set().
  Status set_u8(std::string_view key, uint8_t v) { return set(key, Value::from_uint(ValueType::UINT8, v)); }
  Status set_u16(std::string_view key, uint16_t v) { return set(key, Value::from_uint(ValueType::UINT16, v)); }
  Status set_u32(std::string_view key, uint32_t v) { return set(key, Value::from_uint(ValueType::UINT32, v)); }
  Status set_u64(std::string_view key, uint64_t v) { return set(key, Value::from_uint(ValueType::UINT64, v)); }
  Status set_i8(std::string_view key, int8_t v) { return set(key, Value::from_int(ValueType::INT8, v)); }
  Status set_i16(std::string_view key, int16_t v) { return set(key, Value::from_int(ValueType::INT16, v)); }
  Status set_i32(std::string_view key, int32_t v) { return set(key, Value::from_int(ValueType::INT32, v)); }
  Status set_i64(std::string_view key, int64_t v) { return set(key, Value::from_int(ValueType::INT64, v)); }
  Status set_f32(std::string_view key, float v) { return set(key, Value::from_float(ValueType::FLOAT32, v)); }
  Status set_f64(std::string_view key, double v) { return set(key, Value::from_float(ValueType::FLOAT64, v)); }
  Status set_bool(std::string_view key, bool v) { return set(key, Value::from_bool(v)); }
  Status set_string(std::string_view key, std::string v) { return set(key, Value::from_string(std::move(v))); }

  // Arrays: of strings, of bools, and of numbers. For set_array_numbers,
  // `elem_type` is one of the 10 numeric types and each of `values` is
  // converted to it (values out of its range are an invalid_argument error).
  Status set_array_strings(std::string_view key, const std::vector<std::string>& values);
  Status set_array_bools(std::string_view key, const std::vector<bool>& values);
  Status set_array_numbers(std::string_view key, ValueType elem_type, std::span<const double> values);
  Status set_array_ints(std::string_view key, ValueType elem_type, std::span<const int64_t> values);

  // Data-section alignment (a power of two, 1..2^31); also records
  // general.alignment. Default 32 with no key. Errors: invalid_argument.
  Status set_alignment(uint64_t alignment);

  // Adds a tensor of `type` with shape `ne` (ne[0] contiguous, 1..4 dims,
  // each > 0) and `n_bytes` bytes copied from `data`. Errors: invalid_argument
  // for an empty/duplicate/over-64-byte name, a bad shape, an unknown type,
  // ne[0] not a multiple of the block size, n_bytes different from the size
  // the type and shape imply, or null data with n_bytes > 0.
  Status add_tensor(std::string_view name, GgmlType type, std::span<const int64_t> ne, const void* data,
                    size_t n_bytes);

  // The complete file image.
  std::vector<uint8_t> write_to_memory() const;

  // Writes the file to `path + ".tmp"` and renames it over `path` (so a crash
  // never leaves a half-written file under the final name). Errors: io.
  Status write_to_file(const std::string& path) const;

  size_t n_keys() const noexcept { return kvs_.size(); }
  size_t n_tensors() const noexcept { return tensors_.size(); }
  // The keys in file order, and the data-section alignment (for GgufStreamWriter).
  const std::vector<KeyValue>& metadata() const noexcept { return kvs_; }
  uint64_t alignment() const noexcept { return alignment_; }

 private:
  struct PendingTensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> data;
  };
  std::vector<TensorHeader> headers() const;

  std::vector<KeyValue> kvs_;
  std::vector<PendingTensor> tensors_;
  uint64_t alignment_ = 32;
};

}  // namespace les::gguf
