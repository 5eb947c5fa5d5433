// GGUF reader: parses and bounds-checks a GGUF v2/v3 file and exposes its
// metadata and tensor table, with tensor bytes reachable through a read-only
// mmap and as (file offset, size) for the I/O reactor.
//
// Source: GGUF specification (ggml docs/gguf.md). File layout:
//   magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv | n_kv × (string key,
//   u32 type, value) | n_tensors × (string name, u32 n_dims, n_dims × u64 ne,
//   u32 ggml_type, u64 offset) | padding to `general.alignment` (default 32) |
//   tensor data; each tensor's offset is relative to the data start and aligned.
// Strings are u64 length + bytes (not NUL-terminated). All little-endian.
//
// Validation: every length, count, offset and size is checked with
// overflow-safe arithmetic before use; a malformed file yields
// StatusCode::format with a message naming the field and its byte offset.
// Nothing derived from the file can crash or hang the reader.
//
// Shapes: `ne[0]` is the contiguous (fastest) dimension, as in ggml; a 2-D
// weight {ne0 = cols, ne1 = rows} is `rows` rows of `cols` elements.
//
// Thread-safety: a GgufFile is immutable after open(); all const members are
// safe to call from several threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/gguf_value.h"
#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les::gguf {

inline constexpr uint32_t kMaxDims = 4;
inline constexpr uint64_t kDefaultAlignment = 32;

struct TensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  std::array<int64_t, kMaxDims> ne{1, 1, 1, 1};  // ne[0] contiguous; unused dims are 1
  GgmlType type = GgmlType::F32;
  uint64_t data_offset = 0;  // relative to the start of the data section
  uint64_t file_offset = 0;  // absolute offset in the file
  uint64_t n_bytes = 0;      // size of the tensor data in bytes

  int64_t n_elements() const noexcept { return ne[0] * ne[1] * ne[2] * ne[3]; }
  // Bytes of one row (ne[0] elements).
  uint64_t row_bytes() const noexcept;
};

struct ReadOptions {
  bool use_mmap = true;  // map the whole file read-only; false: metadata only (tensor_data() empty)
};

class GgufFile {
 public:
  // Opens and validates a file. Errors: io (cannot open/read/map), format
  // (anything malformed, with field and offset), unsupported (version 1 or > 3).
  static Result<std::unique_ptr<GgufFile>> open(const std::string& path, const ReadOptions& opts = {});

  // Parses a complete file image held in memory (tests, fuzzing). The buffer
  // must outlive the returned object; tensor_data() points into it.
  static Result<std::unique_ptr<GgufFile>> parse(const uint8_t* data, size_t size);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const noexcept;  // "" for parse()
  uint32_t version() const noexcept;
  uint64_t alignment() const noexcept;    // general.alignment or 32
  uint64_t data_offset() const noexcept;  // absolute offset of the data section
  uint64_t file_size() const noexcept;

  const std::vector<KeyValue>& metadata() const noexcept;
  const Value* find(std::string_view key) const noexcept;  // null if absent

  // Typed getters: error format ("key 'x' has type STRING, expected an integer")
  // or, for the non-optional ones, format when the key is missing.
  Result<uint64_t> get_uint(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key) const;
  Result<double> get_float(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::string> get_string(std::string_view key) const;
  Result<const Array*> get_array(std::string_view key) const;
  // Defaulting versions: return `def` when the key is absent, error if present with a wrong type.
  Result<uint64_t> get_uint_or(std::string_view key, uint64_t def) const;
  Result<double> get_float_or(std::string_view key, double def) const;
  Result<bool> get_bool_or(std::string_view key, bool def) const;
  Result<std::string> get_string_or(std::string_view key, std::string def) const;

  // "qwen3moe" etc. (general.architecture), "" if absent.
  std::string architecture() const;

  const std::vector<TensorInfo>& tensors() const noexcept;
  const TensorInfo* find_tensor(std::string_view name) const noexcept;  // null if absent

  // The tensor's bytes in the mapping; empty span when opened without mmap.
  std::span<const uint8_t> tensor_data(const TensorInfo& t) const noexcept;

 private:
  GgufFile();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace les::gguf
