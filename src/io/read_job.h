// ReadJob: one request in flight inside a backend, with its progress, and the
// rules every backend shares for it:
//   - which descriptor and byte range the next attempt uses (O_DIRECT only
//     when offset, destination and length are all aligned; an unaligned
//     request, or the unaligned tail of one, goes to the buffered descriptor),
//   - what an attempt's result means (advance on a short read, retry on
//     EAGAIN/EINTR, finish with a typed io error otherwise),
//   - batch validation for submit.
// Internal to src/io. Thread-safety: values; a job is owned by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "io/file_table.h"
#include "io/io_backend.h"

namespace les::io {

struct ReadJob {
  ReadRequest request;
  int buffered_fd = -1;
  int direct_fd = -1;        // -1: buffered only
  uint32_t alignment = 4096;  // O_DIRECT alignment
  size_t done = 0;            // bytes already in request.dst
};

// One syscall / SQE worth of reading.
struct ReadAttempt {
  int fd = -1;
  uint64_t offset = 0;
  std::byte* dst = nullptr;
  size_t length = 0;
  bool direct = false;
};

// Largest single attempt (Linux returns at most 0x7ffff000 bytes per read anyway).
inline constexpr size_t kMaxAttemptBytes = size_t{1} << 30;

// The next attempt for a job with done < length.
ReadAttempt next_attempt(const ReadJob& job);

// Asks the hook (may be null) about `attempt`. It may shorten the attempt
// (short_read, keeping O_DIRECT alignment or falling back to the buffered fd)
// or replace its result: returns true and sets *synthetic_result to a
// negative errno or 0 (end of file) when the attempt must not be issued.
bool consult_attempt_hook(ReadAttemptHook* hook, const ReadJob& job, ReadAttempt& attempt,
                          int64_t* synthetic_result);

enum class AttemptOutcome {
  finished,   // *completion is filled
  advance,    // short read: issue next_attempt again
  retry,      // EAGAIN / EINTR: requeue and issue again
};

// Applies one attempt's result (bytes >= 0, or -errno) asked for `asked` bytes.
AttemptOutcome apply_attempt_result(ReadJob& job, int64_t result, size_t asked,
                                    ReadCompletion* completion);

// The completion for a job cancelled before it finished.
ReadCompletion cancelled_completion(const ReadJob& job);

// Checks a submit batch against the file table: every file known, dst set when
// length > 0, offset + length within uint64. Errors: invalid_argument naming
// the request index and tag.
Status validate_batch(std::span<const ReadRequest> requests, FileTable& files);

// A job for a validated request.
ReadJob make_job(const ReadRequest& request, const OpenFile& file, uint32_t alignment);

}  // namespace les::io
