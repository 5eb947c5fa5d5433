// GGUF reader: parses and bounds-checks a GGUF v2/v3 file and exposes its
// metadata and tensor table, with tensor bytes reachable through a read-only
// mmap and as (file offset, size) for the I/O reactor.
//
// Source: GGUF specification (ggml docs/gguf.md). All integers little-endian.
//
// File layout (v2 and v3 share it; v1 used u32 counts and is not supported):
//   u32   magic        "GGUF" (bytes 47 47 55 46)
//   u32   version      2 or 3 (a byte-swapped 3 means a big-endian file: unsupported)
//   u64   n_tensors
//   u64   n_kv
//   n_kv    × { string key; u32 value_type; value }
//   n_tensors × { string name; u32 n_dims; n_dims × u64 ne (ne[0] first);
//                 u32 ggml_type; u64 offset (relative to the data section) }
//   zero padding to a multiple of `general.alignment` (default 32)
//   data section: each tensor at its offset (a multiple of the alignment),
//                 ggml_row_bytes(type, ne[0]) × ne[1] × ne[2] × ne[3] bytes
// string = u64 length + that many bytes (UTF-8, not NUL-terminated).
// value by value_type: UINT8 0, INT8 1, UINT16 2, INT16 3, UINT32 4, INT32 5,
//   FLOAT32 6, BOOL 7 (one byte, 0 or 1), STRING 8, ARRAY 9, UINT64 10,
//   INT64 11, FLOAT64 12. ARRAY = u32 element type + u64 count + count
//   elements encoded as above (elements may themselves be ARRAYs).
// A file with no tensors may end right after the metadata (llama.cpp's
// vocab-only files do).
//
// Validation (each failure is StatusCode::format with the field and byte
// offset, e.g. "tensor 3 'blk.0.attn_q.weight': offset 123456 is not aligned
// to 32 (at byte 4012)"; version 1 or > 3 is StatusCode::unsupported):
//   - every read is checked against the bytes left; counts and lengths are
//     compared with the remaining bytes *before* anything is allocated
//     (n_kv, n_tensors, string lengths, array counts × element size), so
//     memory stays proportional to the file size;
//   - arithmetic on file values is overflow-checked (dimension products,
//     byte sizes, offset + size, alignment padding);
//   - value types < 13, BOOL bytes 0/1, arrays nested at most 8 deep, keys
//     non-empty and <= 65535 bytes, no duplicate keys;
//   - well-known keys have their documented types (core/gguf/gguf_key_rules.h):
//     general.alignment is a UINT32 power of two, tokenizer.ggml.tokens /
//     merges are arrays of STRING, scores of FLOAT32, token_type of INT32, and
//     scores / token_type have as many elements as tokens;
//   - tensors: name 1..64 bytes and unique, 1 <= n_dims <= 4, every ne > 0,
//     known ggml type, ne[0] a multiple of the type's block size, offset
//     aligned, bytes inside the file, no two tensors overlapping.
// Nothing derived from the file can crash or hang the reader; this is
// exercised by tests/core/gguf/test_gguf_mutation.cpp and fuzz/fuzz_gguf.cpp.
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

#include "core/gguf/gguf_value.h"
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
  // Bytes of one row (ne[0] elements); 0 if the type/ne[0] pair is invalid
  // (never the case for a TensorInfo from GgufFile).
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
