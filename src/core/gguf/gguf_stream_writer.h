// Streaming GGUF writer: declare every tensor first (name, type, shape), then
// write the data piece by piece, in any order and from several threads, at
// the offsets the header promised. Memory use is the metadata only, so files
// of any size (a 13 GB synthetic model, a repacked model) can be written.
//
// Usage:
//   GgufStreamWriter w;
//   w.metadata().set_string("general.architecture", "qwen3moe");   // keys, alignment
//   w.declare_tensor("token_embd.weight", GgmlType::Q4_K, {2048, 151936});
//   ...
//   w.begin(path);                       // header + tensor infos + padding; file sized
//   w.write_rows("token_embd.weight", 0, n_rows, bytes);   // or write_tensor_data(name, bytes)
//   ...
//   w.finish();                          // every byte written? fsync, rename tmp -> path
//
// The layout is exactly GgufWriter's (same key order, tensors in declaration
// order, each at the next multiple of the alignment, zero padding, the file
// ending aligned), so the bytes equal GgufWriter::write_to_memory() for the
// same keys and tensors. The data goes to `path + ".tmp"`, which begin()
// sizes to the final length (padding reads as zeros), and finish() renames it
// over `path`; an unfinished writer removes the temporary file when destroyed.
//
// Errors: invalid_argument (bad declaration, duplicate name, unknown tensor,
// a write outside the tensor or overlapping an earlier write, a call in the
// wrong phase), io (create / write / fsync / rename failed; the message names
// the path and errno text), and finish() reports the first tensor that was
// not completely written.
//
// Thread-safety: metadata(), declare_tensor(), begin() and finish() are
// single-threaded. Once begin() has returned, write_tensor_data() and
// write_rows() may be called concurrently from several threads (positioned
// writes; the bookkeeping is locked).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/gguf/gguf_writer.h"
#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les::gguf {

class GgufStreamWriter {
 public:
  GgufStreamWriter() = default;
  ~GgufStreamWriter();
  GgufStreamWriter(const GgufStreamWriter&) = delete;
  GgufStreamWriter& operator=(const GgufStreamWriter&) = delete;

  // Keys and alignment go here (GgufWriter's setters). Tensors added to it
  // with add_tensor() are ignored; declare them below. Set before begin().
  GgufWriter& metadata() noexcept { return meta_; }

  // Declares the next tensor (file order = declaration order). Errors:
  // invalid_argument (see checked_tensor_bytes; duplicate name; after begin()).
  Status declare_tensor(std::string_view name, GgmlType type, std::span<const int64_t> ne);
  Status declare_tensor(std::string_view name, GgmlType type, std::initializer_list<int64_t> ne) {
    return declare_tensor(name, type, std::span<const int64_t>(ne.begin(), ne.size()));
  }

  // Creates `path + ".tmp"`, writes the header, tensor infos and padding, and
  // sizes the file to its final length. Errors: io, invalid_argument (called twice).
  Status begin(const std::string& path);

  // All n_bytes of tensor `name`. Errors: invalid_argument (unknown name,
  // wrong size, already written), io.
  Status write_tensor_data(std::string_view name, std::span<const uint8_t> bytes);

  // Rows [first_row, first_row + bytes.size() / row_bytes) of tensor `name`,
  // where a row is ne[0] elements (row_bytes = ggml_row_bytes(type, ne[0]))
  // and rows count over ne[1] * ne[2] * ne[3]. Errors: invalid_argument
  // (unknown name, a size that is not whole rows, rows past the end, rows
  // already written), io.
  Status write_rows(std::string_view name, int64_t first_row, std::span<const uint8_t> bytes);

  // Any byte range of tensor `name` (offset within the tensor's data). Same errors.
  Status write_bytes(std::string_view name, uint64_t offset, std::span<const uint8_t> bytes);

  // Checks every tensor was completely written, fsyncs, closes and renames
  // the temporary file over `path`. `check` (optional) runs on the closed
  // temporary file (its path given) before the rename: an error from it
  // removes the file and is returned, so `path` only ever holds a checked
  // file (les repack verifies there). Errors: invalid_argument naming the
  // first incomplete tensor (the temporary file is removed), io, check's.
  Status finish(const std::function<Status(const std::string& tmp_path)>& check = {});

  // After begin(): the absolute file offset of tensor `name`'s data, or an
  // invalid_argument error for an unknown name.
  Result<uint64_t> tensor_file_offset(std::string_view name) const;
  // After begin(): the final file size in bytes.
  uint64_t file_size() const noexcept { return file_size_; }
  size_t n_tensors() const noexcept { return tensors_.size(); }

 private:
  struct Tensor {
    TensorHeader header;
    uint64_t file_offset = 0;
    uint64_t row_bytes = 0;
    uint64_t written = 0;
    std::map<uint64_t, uint64_t> spans;  // start -> end of written byte ranges (merged)
  };
  Result<Tensor*> find(std::string_view name);
  void discard();

  GgufWriter meta_;
  std::vector<Tensor> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::string path_, tmp_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::mutex mu_;  // guards Tensor::written / spans and error_
  Status error_;   // the first failed write (finish() returns it)
};

}  // namespace les::gguf
