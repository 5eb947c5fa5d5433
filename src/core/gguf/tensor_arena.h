// TensorArena: the bytes of selected tensors of a GGUF file, read with pread
// into memory LES owns (instead of being reached through a file mapping).
//
// Why: a read-only mapping turns a file that is truncated or replaced while
// the model is loaded into SIGBUS at the next touch of a lost page, which kills
// the process without a message, and the OS may drop mapped pages under memory
// pressure and read them again later. Bytes held here are immune to both; the
// streamed experts then meet a changed file as an I/O error of the next read.
// The cost: the bytes are copied once at load (and live in anonymous memory,
// next to whatever the page cache keeps).
//
// Layout: one allocation; each tensor starts on a 64-byte boundary (every
// kernel's alignment requirement is at most that).
//
// Thread-safety: immutable after read(); find() may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "core/gguf/gguf_reader.h"
#include "util/status.h"

namespace les::gguf {

class TensorArena {
 public:
  TensorArena() = default;
  TensorArena(TensorArena&&) noexcept = default;
  TensorArena& operator=(TensorArena&&) noexcept = default;
  ~TensorArena();

  // Reads every tensor of `file` that `select` accepts from file.path() (a
  // fresh descriptor; short reads continue, EINTR retries). Errors: io (the
  // file cannot be opened, its size is no longer the size `file` was parsed
  // with, a read fails or meets the end of the file; the message names the
  // path and the tensor), out_of_memory, invalid_argument (a file without a
  // path, i.e. from GgufFile::parse).
  static Result<TensorArena> read(const GgufFile& file, const std::function<bool(const TensorInfo&)>& select);

  // The bytes of tensor `t` if this arena holds them, else an empty span.
  std::span<const uint8_t> find(const TensorInfo& t) const noexcept;

  size_t n_tensors() const noexcept { return offsets_.size(); }
  size_t n_bytes() const noexcept { return size_; }

  // Locks the bytes in RAM (mlock), so the OS never pages them out. Errors:
  // resource limits (RLIMIT_MEMLOCK) or permissions, as io with the errno text
  // and the limit to raise; the arena stays usable either way.
  Status lock();
  bool locked() const noexcept { return locked_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const noexcept;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
  bool locked_ = false;
  std::unordered_map<const TensorInfo*, size_t> offsets_;  // tensor -> byte offset in data_
};

}  // namespace les::gguf
