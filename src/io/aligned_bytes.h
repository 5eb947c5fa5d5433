// AlignedBytes: one owned heap block whose address is a multiple of an
// alignment, for direct I/O. O_DIRECT needs the file offset, the length and
// the destination address aligned to the device's logical block size; 4096
// bytes covers every device we target. (The expert cache's slots are the
// engine's large aligned memory, mapped by sched::ExpertCache; this is for
// small blocks: the O_DIRECT probe of io::FileTable, benchmarks.)
//
// Thread-safety: a value; move-only.
#pragma once

#include <cstddef>
#include <span>

#include "util/status.h"

namespace les::io {

// One heap block of `size` bytes whose address is a multiple of `alignment`,
// zero-filled. Move-only; freed by the destructor.
class AlignedBytes {
 public:
  AlignedBytes() = default;
  // Errors: invalid_argument (alignment not a power of two or < sizeof(void*)),
  // out_of_memory.
  static Result<AlignedBytes> allocate(size_t size, size_t alignment = 4096);

  AlignedBytes(AlignedBytes&& other) noexcept;
  AlignedBytes& operator=(AlignedBytes&& other) noexcept;
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  ~AlignedBytes();

  std::byte* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  std::span<std::byte> span() const noexcept { return {data_, size_}; }

 private:
  AlignedBytes(std::byte* data, size_t size) : data_(data), size_(size) {}
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace les::io
