#include "io/read_job.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

namespace les::io {

namespace {

bool aligned(uint64_t x, uint32_t a) { return (x & (a - 1)) == 0; }

std::string describe(const ReadJob& job) {
  return "read tag " + std::to_string(job.request.tag) + " (offset " + std::to_string(job.request.offset) +
         ", length " + std::to_string(job.request.length) + ")";
}

}  // namespace

ReadAttempt next_attempt(const ReadJob& job) {
  ReadAttempt a;
  a.offset = job.request.offset + job.done;
  a.dst = job.request.dst + job.done;
  const size_t remaining = std::min(job.request.length - job.done, kMaxAttemptBytes);
  const uint32_t al = job.alignment;
  if (job.direct_fd >= 0 && aligned(a.offset, al) &&
      aligned(reinterpret_cast<uintptr_t>(a.dst), al) && remaining >= al) {
    a.fd = job.direct_fd;
    a.direct = true;
    a.length = remaining / al * al;  // the unaligned tail (if any) goes buffered next time
  } else {
    a.fd = job.buffered_fd;
    a.length = remaining;
  }
  return a;
}

bool consult_attempt_hook(ReadAttemptHook* hook, const ReadJob& job, ReadAttempt& attempt,
                          int64_t* synthetic_result) {
  if (hook == nullptr) return false;
  const AttemptFault f = hook->before_attempt(job.request, attempt.offset, job.request.length - job.done);
  switch (f.kind) {
    case AttemptFault::Kind::none: return false;
    case AttemptFault::Kind::short_read: {
      size_t n = std::max<size_t>(1, std::min(f.max_bytes, attempt.length));
      if (attempt.direct) {
        const size_t al = job.alignment;
        if (n >= al) {
          n = n / al * al;
        } else {  // too short for O_DIRECT: this attempt goes through the page cache
          attempt.fd = job.buffered_fd;
          attempt.direct = false;
        }
      }
      attempt.length = n;
      return false;
    }
    case AttemptFault::Kind::eagain: *synthetic_result = -EAGAIN; return true;
    case AttemptFault::Kind::eio: *synthetic_result = -EIO; return true;
    case AttemptFault::Kind::eof: *synthetic_result = 0; return true;
  }
  return false;
}

AttemptOutcome apply_attempt_result(ReadJob& job, int64_t result, size_t asked,
                                    ReadCompletion* completion) {
  completion->tag = job.request.tag;
  if (result > 0) {
    if (static_cast<uint64_t>(result) > asked) {
      completion->status = internal_error(describe(job) + ": kernel returned " + std::to_string(result) +
                                          " bytes for a " + std::to_string(asked) + "-byte read");
      completion->bytes = job.done;
      return AttemptOutcome::finished;
    }
    job.done += static_cast<size_t>(result);
    if (job.done == job.request.length) {
      completion->status = Status();
      completion->bytes = job.done;
      return AttemptOutcome::finished;
    }
    return AttemptOutcome::advance;
  }
  if (result == -EAGAIN || result == -EINTR) return AttemptOutcome::retry;
  completion->bytes = job.done;
  if (result == 0) {
    completion->status = io_error(describe(job) + ": end of file at offset " +
                                  std::to_string(job.request.offset + job.done) + " after " +
                                  std::to_string(job.done) + " bytes (file shorter than offset + length)");
  } else if (result == -ECANCELED) {
    completion->status = cancelled_error(describe(job) + ": cancelled after " + std::to_string(job.done) +
                                         " bytes");
  } else {
    const int err = static_cast<int>(-result);
    completion->status = io_error(describe(job) + ": errno " + std::to_string(err) + " (" +
                                  std::strerror(err) + ") at offset " +
                                  std::to_string(job.request.offset + job.done) + " after " +
                                  std::to_string(job.done) + " bytes");
  }
  return AttemptOutcome::finished;
}

ReadCompletion cancelled_completion(const ReadJob& job) {
  ReadCompletion c;
  c.tag = job.request.tag;
  c.bytes = job.done;
  c.status = cancelled_error(describe(job) + ": cancelled after " + std::to_string(job.done) + " bytes");
  return c;
}

Status validate_batch(std::span<const ReadRequest> requests, FileTable& files) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const ReadRequest& r = requests[i];
    const std::string who = "submit: request " + std::to_string(i) + " (tag " + std::to_string(r.tag) + ")";
    if (files.find(r.file) == nullptr) {
      return invalid_argument_error(who + ": unknown file id " + std::to_string(r.file));
    }
    if (r.length > 0 && r.dst == nullptr) return invalid_argument_error(who + ": null destination");
    if (r.offset > std::numeric_limits<uint64_t>::max() - r.length) {
      return invalid_argument_error(who + ": offset " + std::to_string(r.offset) + " + length " +
                                    std::to_string(r.length) + " overflows");
    }
    if (r.length > static_cast<size_t>(std::numeric_limits<int64_t>::max())) {
      return invalid_argument_error(who + ": length " + std::to_string(r.length) + " too large");
    }
  }
  return Status();
}

ReadJob make_job(const ReadRequest& request, const OpenFile& file, uint32_t alignment) {
  ReadJob j;
  j.request = request;
  j.buffered_fd = file.buffered_fd;
  j.direct_fd = file.direct_fd;
  j.alignment = alignment;
  return j;
}

}  // namespace les::io
