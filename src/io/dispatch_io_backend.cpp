// DispatchIoBackend: IoBackend over libdispatch's dispatch_io (<dispatch/io.h>:
// dispatch_io_create, dispatch_io_read, dispatch_data_apply, dispatch_io_close),
// the asynchronous file I/O of macOS and iOS where io_uring does not exist; on
// Linux built against the Swift toolchain's libdispatch (swift-corelibs-libdispatch)
// and tested there with the same suites as io_uring and pread (tests/io,
// tests/sched, tests/api through io_backend_list.h). Its handlers are blocks:
// this file needs clang's -fblocks and the BlocksRuntime (cmake/LesDispatchIo.cmake).
//
// How it works:
//   - open_file opens the file once for the FileTable (size, O_DIRECT probe,
//     close rules) and dup()s each descriptor it will read through into a
//     DISPATCH_IO_RANDOM channel, which owns the dup; the channel's cleanup
//     handler closes it, and the destructor waits for every cleanup.
//   - At most queue_depth dispatch_io_read operations are scheduled at once;
//     the rest wait FIFO. One attempt reads at most kMaxDispatchAttempt bytes
//     (a longer request continues as after a short read), which bounds how
//     long cancel_all waits for a scheduled read.
//   - The I/O handler runs on one serial queue owned by the backend. dispatch_io
//     reads into its own page-aligned buffers of one chunk (512 KiB - 1 MiB) and
//     delivers each chunk as it arrives (the default low-water mark), so the
//     handler copies chunk by chunk into the request's destination (one memcpy
//     per byte; at most about one chunk per device held by libdispatch). On
//     `done` it decides with the shared rules (route_attempt): complete, advance
//     and re-issue the remainder (fewer bytes without error), requeue
//     (EAGAIN/EINTR), or fail (end of file, other errno) with ReadJob's messages.
//     It also issues the next waiting request.
//   - libdispatch performs the operations of one device one at a time, in
//     chunks, and asks the kernel to read ahead the next chunks of the queued
//     operations (F_RDADVISE on Apple, posix_fadvise(POSIX_FADV_WILLNEED) on
//     Linux: libdispatch's own choice, not this file's). So the queue depth
//     keeps the device's queue full but does not put several reads in the disk
//     at once the way io_uring and the pread pool do; bench_io measures it.
//   - cancel_all drops waiting requests and waits for the scheduled ones (each
//     at most kMaxDispatchAttempt bytes); those that had not finished complete
//     as cancelled.
//
// Apple and Linux differ only in how the page cache is bypassed (platform
// guards below):
//   - Linux: O_DIRECT, as the other backends. FileTable probes an O_DIRECT
//     descriptor per file; when it passes, a second channel reads through it
//     the attempts whose offset, destination and length are aligned
//     (next_attempt's rule; dispatch_io's own buffers are page-aligned and its
//     chunks are multiples of the page size, as O_DIRECT needs). FileInfo.direct_io
//     reports the probe.
//   - Apple: there is no O_DIRECT. With IoOptions::use_direct_io the channel's
//     descriptor gets fcntl(F_NOCACHE, 1), which has no alignment rules, so
//     every attempt reads through one channel; FileInfo.direct_io stays false
//     (it reports the O_DIRECT probe only).
//
// Thread-safety: see io_backend.h. Internally one mutex guards the queues and
// channels; the serial handler queue and the submitter thread both take it.
#if defined(LES_HAVE_DISPATCH_IO)

#include "io/dispatch_io_backend.h"

#include <dispatch/dispatch.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "io/file_table.h"
#include "io/io_options_check.h"
#include "io/read_flow.h"
#include "io/read_job.h"

namespace les::io {

namespace {

// Largest single dispatch_io_read (a multiple of every power-of-two alignment up to it).
constexpr size_t kMaxDispatchAttempt = size_t{8} << 20;

// The channels reading one file: buffered, and on Linux the O_DIRECT one (or null).
struct Channels {
  dispatch_io_t buffered = nullptr;
  dispatch_io_t direct = nullptr;
};

std::string errno_text(int err) { return "errno " + std::to_string(err) + " (" + std::strerror(err) + ")"; }

class DispatchIoBackend final : public IoBackend {
 public:
  explicit DispatchIoBackend(const IoOptions& o)
#if defined(__APPLE__)
      : options_(o), files_(/*use_direct_io=*/false, o.direct_alignment) {}  // no O_DIRECT: F_NOCACHE
#else
      : options_(o), files_(o.use_direct_io, o.direct_alignment) {}
#endif

  ~DispatchIoBackend() override {
    cancel_all();
    for (auto& [id, ch] : channels_) close_channels(ch, DISPATCH_IO_STOP);
    channels_.clear();
    // Every channel's cleanup handler (which closes its descriptor) has run once this returns.
    if (cleanups_ != nullptr) {
      dispatch_group_wait(cleanups_, DISPATCH_TIME_FOREVER);
      dispatch_release(cleanups_);
    }
    if (handler_queue_ != nullptr) dispatch_release(handler_queue_);
  }

  Status init() {
    handler_queue_ = dispatch_queue_create("les.io.dispatch_io", DISPATCH_QUEUE_SERIAL);
    if (handler_queue_ == nullptr) return internal_error("dispatch_io backend: dispatch_queue_create failed");
    cleanups_ = dispatch_group_create();
    if (cleanups_ == nullptr) return internal_error("dispatch_io backend: dispatch_group_create failed");
    return Status();
  }

  std::string name() const override { return "dispatch_io"; }

  Result<FileId> open_file(const std::string& path) override {
    LES_ASSIGN_OR_RETURN(FileId id, files_.open(path));
    const OpenFile* f = files_.find(id);
    Channels ch;
    Status st = make_channel(f->buffered_fd, path, &ch.buffered);
    if (st.ok() && f->direct_fd >= 0) st = make_channel(f->direct_fd, path, &ch.direct);
    if (!st.ok()) {
      close_channels(ch, DISPATCH_IO_STOP);
      (void)files_.close(id);
      return st;
    }
    std::lock_guard<std::mutex> lock(mu_);
    channels_[id] = ch;
    return id;
  }

  Result<FileInfo> file_info(FileId file) const override { return files_.info(file); }

  Status close_file(FileId file) override {
    LES_RETURN_IF_ERROR(files_.close(file));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(file);
    if (it != channels_.end()) {
      close_channels(it->second, 0);
      channels_.erase(it);
    }
    return Status();
  }

  Status register_buffers(std::span<const std::span<std::byte>>) override {
    if (outstanding_ != 0) return invalid_argument_error("register_buffers: requests outstanding");
    return Status();  // dispatch_io reads into its own buffers: nothing to register
  }

  Status submit(std::span<const ReadRequest> requests) override {
    LES_RETURN_IF_ERROR(validate_batch(requests, files_));
    std::lock_guard<std::mutex> lock(mu_);
    admit_batch(requests, files_, options_.direct_alignment, finished_,
                [&](ReadJob&& job) { pending_.push_back(std::make_shared<ReadJob>(std::move(job))); });
    outstanding_ += requests.size();
    issue_locked();
    done_cv_.notify_all();
    return Status();
  }

  Status reap(size_t min_complete, std::chrono::nanoseconds timeout,
              std::vector<ReadCompletion>& out) override {
    std::unique_lock<std::mutex> lock(mu_);
    reap_finished(lock, done_cv_, finished_, files_, &outstanding_, min_complete, timeout, out);
    return Status();
  }

  void cancel_all() override {
    std::unique_lock<std::mutex> lock(mu_);
    cancelling_ = true;
    for (auto& j : pending_) finished_.push_back({cancelled_completion(*j), j->request.file});
    pending_.clear();
    idle_cv_.wait(lock, [&] { return in_flight_ == 0; });
    cancelling_ = false;
    done_cv_.notify_all();
  }

  size_t outstanding() const override { return outstanding_; }
  uint32_t queue_depth() const override { return options_.queue_depth; }

 private:
  // A DISPATCH_IO_RANDOM channel over a dup of `fd`, which the channel owns.
  Status make_channel(int fd, const std::string& path, dispatch_io_t* out) {
    const int dup_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) {
      return io_error("dup for the dispatch_io channel of '" + path + "': " + errno_text(errno));
    }
#if defined(__APPLE__)
    // Apple's page-cache bypass (O_DIRECT does not exist there): no alignment rules.
    if (options_.use_direct_io && ::fcntl(dup_fd, F_NOCACHE, 1) != 0) {
      const int err = errno;
      ::close(dup_fd);
      return io_error("fcntl(F_NOCACHE) on '" + path + "': " + errno_text(err));
    }
#endif
    dispatch_group_enter(cleanups_);
    dispatch_group_t cleanups = cleanups_;
    dispatch_io_t ch = dispatch_io_create(DISPATCH_IO_RANDOM, dup_fd, handler_queue_, ^(int) {
      ::close(dup_fd);
      dispatch_group_leave(cleanups);
    });
    if (ch == nullptr) {
      ::close(dup_fd);
      dispatch_group_leave(cleanups_);
      return io_error("dispatch_io_create for '" + path + "' failed");
    }
    *out = ch;
    return Status();
  }

  // Closes both channels of a file (flags 0: after their operations; DISPATCH_IO_STOP: at once).
  static void close_channels(Channels& ch, dispatch_io_close_flags_t flags) {
    for (dispatch_io_t* c : {&ch.buffered, &ch.direct}) {
      if (*c == nullptr) continue;
      dispatch_io_close(*c, flags);
      dispatch_release(*c);
      *c = nullptr;
    }
  }

  // Schedules waiting jobs while fewer than queue_depth are in flight. Caller holds mu_.
  // Each waiting job is tried at most once per call (a test hook may answer EAGAIN
  // without a read, which requeues it); if that leaves jobs waiting and none in
  // flight, the handler queue calls again, so the waiting jobs never stall.
  void issue_locked() {
    issue_round_locked();
    if (in_flight_ != 0 || pending_.empty() || cancelling_) return;
    ++in_flight_;  // the continuation counts as in flight: cancel_all and the destructor wait for it
    dispatch_async(handler_queue_, ^{
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
      if (!cancelling_) issue_locked();
      if (in_flight_ == 0) idle_cv_.notify_all();
    });
  }

  void issue_round_locked() {
    size_t budget = pending_.size();
    while (budget-- > 0 && !pending_.empty() && in_flight_ < options_.queue_depth) {
      std::shared_ptr<ReadJob> job = pending_.front();
      pending_.pop_front();
      ReadAttempt a = next_attempt(*job);
      a.length = std::min(a.length, kMaxDispatchAttempt);
      int64_t synthetic = 0;
      if (consult_attempt_hook(options_.attempt_hook, *job, a, &synthetic)) {
        route_locked(job, synthetic, a.length);
        continue;
      }
      auto it = channels_.find(job->request.file);
      dispatch_io_t ch = it == channels_.end() ? nullptr : a.direct ? it->second.direct : it->second.buffered;
      if (ch == nullptr) {
        route_locked(job, -EBADF, a.length);
        continue;
      }
      ++in_flight_;
      auto got = std::make_shared<size_t>(0);  // bytes this operation delivered so far
      std::byte* const dst = a.dst;
      const size_t asked = a.length;
      dispatch_io_read(ch, static_cast<off_t>(a.offset), asked, handler_queue_,
                       ^(bool done, dispatch_data_t data, int error) {
                         if (data != nullptr) {
                           dispatch_data_apply(data, ^bool(dispatch_data_t, size_t, const void* buf, size_t n) {
                             const size_t take = std::min(n, asked - *got);
                             std::memcpy(dst + *got, buf, take);
                             *got += take;
                             return true;
                           });
                         }
                         if (done) on_attempt_done(job, *got, error, asked);
                       });
    }
  }

  // An operation has ended (on the handler queue): bytes delivered count first
  // (an error after them recurs on the re-issued remainder); no bytes: the
  // errno, or end of file.
  void on_attempt_done(const std::shared_ptr<ReadJob>& job, size_t got, int error, size_t asked) {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    const int64_t result = got > 0 ? static_cast<int64_t>(got) : error != 0 ? -static_cast<int64_t>(error) : 0;
    route_locked(job, result, asked);
    if (!cancelling_) issue_locked();
    if (in_flight_ == 0) idle_cv_.notify_all();
  }

  // Applies one operation's result (route_attempt). Caller holds mu_.
  void route_locked(const std::shared_ptr<ReadJob>& job, int64_t result, size_t asked) {
    bool issue_next = false;
    if (std::optional<FinishedRead> fin = route_attempt(*job, result, asked, cancelling_, &issue_next)) {
      finished_.push_back(std::move(*fin));
      done_cv_.notify_all();
    } else if (issue_next) {
      pending_.push_front(job);
    } else {
      pending_.push_back(job);
    }
  }

  IoOptions options_;
  FileTable files_;          // submitter thread only
  size_t outstanding_ = 0;   // submitter thread only
  dispatch_queue_t handler_queue_ = nullptr;
  dispatch_group_t cleanups_ = nullptr;  // one member per open channel, left by its cleanup handler

  std::mutex mu_;
  std::condition_variable done_cv_;
  std::condition_variable idle_cv_;
  std::unordered_map<FileId, Channels> channels_;  // guarded by mu_
  std::deque<std::shared_ptr<ReadJob>> pending_;   // guarded by mu_
  std::vector<FinishedRead> finished_;             // guarded by mu_
  uint32_t in_flight_ = 0;                         // guarded by mu_
  bool cancelling_ = false;                        // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<IoBackend>> create_dispatch_io_backend(const IoOptions& options) {
  LES_RETURN_IF_ERROR(check_io_options(options, "dispatch_io backend"));
  auto b = std::make_unique<DispatchIoBackend>(options);
  LES_RETURN_IF_ERROR(b->init());
  return std::unique_ptr<IoBackend>(std::move(b));
}

}  // namespace les::io

#endif  // LES_HAVE_DISPATCH_IO
