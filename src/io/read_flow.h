// The path a read request takes through every backend, written once: admitted
// by submit (admit_batch), routed after each attempt (route_attempt), held as
// a FinishedRead until reap hands it out (hand_out_finished), and, for the
// backends whose reads finish on other threads (the pread workers, dispatch_io's
// handler queue), the waiting reap itself (reap_finished). io_uring's reap
// waits on its completion ring instead and shares the rest.
// Internal to src/io. Thread-safety: as stated per function; FinishedRead is a value.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "io/file_table.h"
#include "io/io_backend.h"
#include "io/read_job.h"

namespace les::io {

// A read that has finished (ok, failed or cancelled) and waits to be reaped,
// with the file whose outstanding count it still holds.
struct FinishedRead {
  ReadCompletion completion;
  FileId file = 0;
};

// Admits a batch that validate_batch accepted: each request counts against its
// file's outstanding count; an empty one (length 0) finishes at once, ok, into
// `finished`; every other becomes a ReadJob passed to enqueue(ReadJob&&).
// The caller adds the batch to its own outstanding count. Call from the
// submitter thread, with whatever lock guards `finished` held.
template <class Enqueue>
void admit_batch(std::span<const ReadRequest> requests, FileTable& files, uint32_t direct_alignment,
                 std::vector<FinishedRead>& finished, Enqueue&& enqueue) {
  for (const ReadRequest& r : requests) {
    OpenFile* f = files.find(r.file);
    ++f->outstanding;
    if (r.length == 0) {
      finished.push_back({ReadCompletion{r.tag, Status(), 0}, r.file});
    } else {
      enqueue(make_job(r, *f, direct_alignment));
    }
  }
}

// Applies one attempt's result (bytes >= 0, or -errno, for `asked` bytes;
// apply_attempt_result) and says where the job goes: the finished read to hand
// out, or nothing when the job must be issued again, with *issue_next true for
// the rest of a short read (issue it before the others) and false for a retry
// after EAGAIN/EINTR (queue it behind them). While `cancelling`, a job that
// would be issued again finishes as cancelled instead. Same thread rules as
// the job.
std::optional<FinishedRead> route_attempt(ReadJob& job, int64_t result, size_t asked, bool cancelling,
                                          bool* issue_next);

// Moves every read of `finished` to `out` in order, releases each from its
// file's outstanding count in `files` and from *outstanding (the backend's
// count of accepted, unreaped requests); `finished` ends empty. Returns how
// many were moved. Call from the thread that owns `files` (the reaper), with
// whatever lock guards `finished` held.
size_t hand_out_finished(std::vector<FinishedRead>& finished, FileTable& files, size_t* outstanding,
                         std::vector<ReadCompletion>& out);

// IoBackend::reap for a backend whose reads are finished by other threads into
// `finished`, which the mutex held by `lock` guards and whose every push
// notifies `done_cv`: hands out finished reads (hand_out_finished) until this
// call has handed out min(min_complete, *outstanding at entry), or `timeout`
// (kWaitForever: no limit) has passed. `lock` holds the mutex on entry and on
// return. Called by the reaper thread only.
void reap_finished(std::unique_lock<std::mutex>& lock, std::condition_variable& done_cv,
                   std::vector<FinishedRead>& finished, FileTable& files, size_t* outstanding,
                   size_t min_complete, std::chrono::nanoseconds timeout, std::vector<ReadCompletion>& out);

}  // namespace les::io
