// Reading a whole file that a caller names (a saved state, a prompt file, an
// imatrix), with a bound: a file is never read past `max_bytes`, so /dev/zero,
// a FIFO that never ends or a huge (sparse) file cannot take the process's
// memory. Before anything is read the opened file is stat'ed (a directory is
// refused; with regular_only so is anything whose end is not known from its
// size: a FIFO, a character or block device, a socket, and opening such a
// file then never blocks: a FIFO without a writer would wait forever).
// `check_head`, when given, sees the first `head_bytes` bytes (fewer if the
// file is shorter) before the rest is read, and for a regular file before its
// size is compared with the bound: a magic check refuses a file of another
// kind by its kind. A regular file larger than the bound is then refused from
// its size, without reading it.
//
// Messages start with `what` and the path: "session state '/dev/zero': ...".
//
// Thread-safety: reads its arguments and the file; no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "util/status.h"

namespace les {

struct BoundedRead {
  std::string what = "file";  // starts every message ("session state", "prompt file")
  uint64_t max_bytes = 0;     // more is refused (invalid_argument naming the bound)
  std::string max_reason;     // why that bound, appended to the message ("the largest state ...")
  bool regular_only = false;  // refuse FIFOs, devices and sockets
  size_t head_bytes = 0;      // given to check_head before the rest is read
  std::function<Status(std::span<const uint8_t> head)> check_head;
};

// The whole file `path` ("-" = standard input when `allow_stdin`). Errors:
// io (cannot open or read: errno's text), invalid_argument (a directory, a
// refused kind of file, more than max_bytes), or check_head's error.
Result<std::string> read_bounded(const std::string& path, const BoundedRead& r, bool allow_stdin = false);

// "1.5 GiB", "64 MiB", "12 KiB", "100 bytes": a size for messages.
std::string human_bytes(uint64_t n);

}  // namespace les
