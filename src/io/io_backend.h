// IoBackend: the I/O reactor interface. Submit reads of `length` bytes at a
// file `offset` into caller memory; reap one completion per request.
//
// This folder knows files, byte ranges and buffers, nothing about models or
// experts: a caller (src/sched) turns "expert e of layer l" into ReadRequests.
//
// Semantics every backend implements (io_uring, pread thread pool, dispatch_io):
//   - Exactly one ReadCompletion per accepted request: ok with `bytes ==
//     length`, an io error, or cancelled.
//   - A short read (fewer bytes than asked, not at end of file) is advanced and
//     resubmitted inside the backend; the caller never sees it.
//   - EAGAIN / EINTR results are requeued inside the backend.
//   - Any other failure (EIO, EBADF, end of file before `length` bytes because
//     the file is shorter or was truncated under us) completes that request
//     with StatusCode::io and a message naming tag, offset, length, bytes read
//     and errno. The backend stays usable for other requests.
//   - Requests beyond the queue depth wait inside the backend (FIFO) and are
//     issued as earlier reads finish; `submit` never blocks on the disk.
//
// Thread-safety: thread-compatible. One thread at a time calls submit, reap,
// cancel_all, open_file, close_file and register_buffers (normally the
// scheduler thread); completions are reaped by that same thread. Backends may
// use internal threads (the pread pool does), which only touch the request's
// destination memory. Destroying a backend cancels and waits for every read,
// so destinations are no longer written once the destructor returns.
//
// Buffer lifetime: a request's destination must stay valid until its
// completion has been reaped (or cancel_all has returned).
//
// Usage, as the scheduler reads experts (sched/streaming_expert_source.cpp;
// error handling shortened):
//   IoOptions opts;  opts.queue_depth = 64;                      // io_factory.h
//   auto backend = create_io_backend(IoBackendKind::automatic, opts).value();
//   FileId f = backend->open_file(model_path).value();
//   // The destinations are the expert cache's slots: one aligned arena
//   // (sched/expert_cache.h), registered as fixed buffers while no read is
//   // outstanding (sched/slot_registration.h); unsupported is fine, the reads
//   // then go unregistered.
//   backend->register_buffers(slot_regions);
//   ReadRequest r{/*tag=*/slot * 4 + part, f, offset, length, slot_data + slot_offset};
//   backend->submit({&r, 1});        // an expert's reads (gate, up, down) in one call
//   std::vector<ReadCompletion> done;
//   backend->reap(/*min_complete=*/0, std::chrono::nanoseconds(0), done);  // poll between computes
//   backend->reap(/*min_complete=*/1, kWaitForever, done);  // wait only when nothing is ready
// (Reads at unaligned file offsets: aligned_range.h.)
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/status.h"

namespace les::io {

// Identifies a file opened by IoBackend::open_file. Valid only for the backend
// that returned it.
using FileId = uint32_t;

// One read: `length` bytes of file `file` starting at byte `offset` into `dst`.
// `tag` is opaque to the backend and echoed in the completion (callers usually
// keep it unique among outstanding requests). `dst` is borrowed: it must stay
// valid and untouched by the caller until the completion is reaped.
struct ReadRequest {
  uint64_t tag = 0;
  FileId file = 0;
  uint64_t offset = 0;   // bytes from the start of the file
  size_t length = 0;     // bytes to read; 0 completes immediately with ok
  std::byte* dst = nullptr;
};

// The result of one request. `bytes` is how many bytes were placed in dst
// (== length when ok; the prefix that arrived before an error otherwise).
struct ReadCompletion {
  uint64_t tag = 0;
  Status status;
  size_t bytes = 0;
};

// Timeout meaning "wait until min_complete completions are available".
inline constexpr std::chrono::nanoseconds kWaitForever = std::chrono::nanoseconds::max();

// Options common to every backend. Backends ignore what they cannot use.
struct IoOptions {
  // Most reads in flight at once (io_uring SQ entries; pread worker threads).
  // Must be in [1, 4096]; the pread backend caps its threads at 64.
  uint32_t queue_depth = 16;
  // Open files with O_DIRECT too where the file system allows it (probed at
  // open_file); requests whose offset, destination and length are aligned to
  // `direct_alignment` bypass the page cache, the rest use the buffered fd.
  bool use_direct_io = true;
  // Alignment O_DIRECT needs for offset, destination and length (bytes, power of two).
  uint32_t direct_alignment = 4096;
  // Test seam, borrowed, may be null: consulted before every read attempt; it
  // can shorten the attempt or replace its result (see FaultInjectingBackend).
  class ReadAttemptHook* attempt_hook = nullptr;
};

// What a ReadAttemptHook wants done with one attempt.
struct AttemptFault {
  enum class Kind { none, short_read, eagain, eio, eof };
  Kind kind = Kind::none;
  // short_read: the attempt asks the OS for at most this many bytes (>= 1).
  size_t max_bytes = 0;
};

// Called by a backend before each read attempt (one syscall / one SQE) with
// the request, the file offset of this attempt and the bytes still missing.
// Must be thread-safe: the pread backend calls it from its worker threads.
class ReadAttemptHook {
 public:
  virtual ~ReadAttemptHook() = default;
  virtual AttemptFault before_attempt(const ReadRequest& request, uint64_t attempt_offset,
                                      size_t remaining) = 0;
};

// Per-file facts found at open_file.
struct FileInfo {
  uint64_t size_bytes = 0;   // at open time
  bool direct_io = false;    // an O_DIRECT descriptor passed the probe read
};

class IoBackend {
 public:
  virtual ~IoBackend() = default;
  IoBackend() = default;
  IoBackend(const IoBackend&) = delete;
  IoBackend& operator=(const IoBackend&) = delete;

  // "io_uring", "pread", "dispatch_io", "fault_injecting(<inner>)".
  virtual std::string name() const = 0;

  // Opens `path` read-only (plus an O_DIRECT descriptor when options allow and
  // the probe read succeeds). Errors: io (open failed, naming path and errno).
  virtual Result<FileId> open_file(const std::string& path) = 0;
  // Facts about an open file. Errors: invalid_argument for an unknown id.
  virtual Result<FileInfo> file_info(FileId file) const = 0;
  // Closes a file. Errors: invalid_argument for an unknown id or when requests
  // on it are still outstanding (not yet reaped).
  virtual Status close_file(FileId file) = 0;

  // Optional optimisation hint: memory the caller will read into (for example
  // the expert cache's slots). io_uring registers it as fixed
  // buffers; other backends return ok and ignore it. Must be called with no
  // request outstanding; replaces an earlier registration. The regions stay
  // borrowed until the backend is destroyed or register_buffers is called again.
  // Errors: invalid_argument (requests outstanding), unsupported (the kernel
  // refused; the backend keeps working without registered buffers).
  virtual Status register_buffers(std::span<const std::span<std::byte>> regions) = 0;

  // Accepts every request or none: invalid_argument (unknown file, null dst
  // with length > 0, offset + length overflow) rejects the whole batch and
  // names the offending request. Never blocks on I/O.
  virtual Status submit(std::span<const ReadRequest> requests) = 0;

  // Appends completions to `out`. Returns once at least `min_complete` are
  // appended by this call, or `timeout` has passed (then possibly fewer), or
  // nothing is outstanding any more. min_complete = 0 polls without waiting.
  // Drives internal progress (requeues, resubmissions), so a caller with reads
  // outstanding must keep calling it. Errors: internal (the kernel interface
  // failed in a way that is not a per-request error).
  virtual Status reap(size_t min_complete, std::chrono::nanoseconds timeout,
                      std::vector<ReadCompletion>& out) = 0;

  // Cancels every outstanding request and returns once no read writes into any
  // destination any more. Requests not finished by then complete with
  // StatusCode::cancelled (bytes = what had arrived); they and any finished but
  // unreaped completions are returned by the next reap, which need not wait.
  virtual void cancel_all() = 0;

  // Requests accepted by submit and not yet returned by reap.
  virtual size_t outstanding() const = 0;
  virtual uint32_t queue_depth() const = 0;
};

}  // namespace les::io
