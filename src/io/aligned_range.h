// widen_to_alignment: turns an arbitrary byte range of a file into one that
// O_DIRECT can read, for callers that own an aligned destination with slack
// (e.g. an AlignedBytes block). Zero-copy alternative to a bounce buffer:
// read the widened range into the aligned buffer and use `dst + skip`.
//
// Example (alignment 4096, file of 10000 bytes): bytes [5000, 5100) widen to
// offset 4096, length 4096, skip 904; bytes [9000, 9100) widen to offset
// 8192, length 1808 (clamped at end of file), skip 808. A clamped range ends
// in a short unaligned tail, which the backend reads through the page cache,
// with no end-of-file error.
//
// Thread-safety: pure function.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace les::io {

struct WidenedRange {
  uint64_t offset = 0;  // aligned down
  size_t length = 0;    // to the aligned-up end, or to file_size if that comes first
  size_t skip = 0;      // the requested bytes start at dst + skip
};

// Precondition: alignment is a power of two; offset + length <= file_size
// (callers check ranges against the file before reading).
inline WidenedRange widen_to_alignment(uint64_t offset, size_t length, uint64_t file_size,
                                       uint32_t alignment) {
  const uint64_t mask = alignment - 1;
  WidenedRange w;
  w.offset = offset & ~mask;
  const uint64_t end = std::min<uint64_t>((offset + length + mask) & ~mask, file_size);
  w.length = static_cast<size_t>(std::max<uint64_t>(end, offset + length) - w.offset);
  w.skip = static_cast<size_t>(offset - w.offset);
  return w;
}

// Bytes of destination a widened read of `length` bytes may need at most.
inline size_t widened_capacity(size_t length, uint32_t alignment) {
  return length + 2 * static_cast<size_t>(alignment);
}

}  // namespace les::io
