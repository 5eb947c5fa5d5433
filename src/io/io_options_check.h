// Validation of IoOptions and timeout arithmetic shared by the backends. Internal to src/io.
#pragma once

#include <chrono>
#include <string>

#include "io/io_backend.h"

namespace les::io {

// Errors: invalid_argument naming the field (queue_depth outside [1, 4096],
// direct_alignment not a power of two >= 512).
inline Status check_io_options(const IoOptions& o, const std::string& who) {
  if (o.queue_depth == 0 || o.queue_depth > 4096) {
    return invalid_argument_error(who + ": queue_depth " + std::to_string(o.queue_depth) +
                                  " outside [1, 4096]");
  }
  const uint32_t a = o.direct_alignment;
  if (a < 512 || (a & (a - 1)) != 0) {
    return invalid_argument_error(who + ": direct_alignment " + std::to_string(a) +
                                  " is not a power of two >= 512");
  }
  return Status();
}

// steady_clock deadline `timeout` from now; time_point::max() for kWaitForever
// or anything longer than a year (no overflow).
inline std::chrono::steady_clock::time_point deadline_after(std::chrono::nanoseconds timeout) {
  if (timeout >= std::chrono::hours(24 * 365)) return std::chrono::steady_clock::time_point::max();
  if (timeout < std::chrono::nanoseconds::zero()) timeout = std::chrono::nanoseconds::zero();
  return std::chrono::steady_clock::now() + timeout;
}

}  // namespace les::io
