// DispatchIoBackend: IoBackend over Apple's dispatch_io (libdispatch), for
// macOS and iOS where io_uring does not exist.
//
// UNTESTED: written against Apple's <dispatch/io.h> documentation
// (dispatch_io_create, dispatch_io_read, dispatch_data_apply,
// dispatch_io_close) on a Linux machine; it is compiled only when __APPLE__
// is defined and has never been built or run. Expect to fix it on the first
// Apple build, then run tests/io (add "dispatch_io" to io_backend_kinds()).
//
// How it works:
//   - open_file opens the file once for the FileTable (size, and close rules)
//     and dup()s a descriptor that a DISPATCH_IO_RANDOM channel takes over;
//     the channel's cleanup handler closes the dup.
//   - At most queue_depth dispatch_io_read operations are scheduled at once;
//     the rest wait FIFO. The I/O handler runs on one serial queue owned by
//     the backend, copies each delivered dispatch_data region into the
//     request's destination (dispatch_io reads into its own buffers, so this
//     backend costs one memcpy per byte), and on `done` decides: complete,
//     advance and re-issue the remainder (fewer bytes without EOF), requeue
//     (EAGAIN/EINTR), or fail (end of file, other errno) with the shared
//     ReadJob messages. The handler also issues the next waiting request.
//   - No O_DIRECT on Apple (FileTable's probe is compiled out); F_NOCACHE is
//     not set either.
//   - cancel_all drops waiting requests and waits for the scheduled ones;
//     their completions become `cancelled` unless they had finished.
//
// Thread-safety: see io_backend.h. Internally one mutex guards the queues;
// the serial handler queue and the submitter thread both take it.
#if defined(__APPLE__)

#include "io/dispatch_io_backend.h"

#include <dispatch/dispatch.h>
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
#include "io/read_flow.h"
#include "io/io_options_check.h"
#include "io/read_job.h"

namespace les::io {

namespace {

class DispatchIoBackend final : public IoBackend {
 public:
  explicit DispatchIoBackend(const IoOptions& o)
      : options_(o), files_(/*use_direct_io=*/false, o.direct_alignment) {}

  ~DispatchIoBackend() override {
    cancel_all();
    for (auto& [id, ch] : channels_) {
      dispatch_io_close(ch, DISPATCH_IO_STOP);
      dispatch_release(ch);
    }
    if (handler_queue_ != nullptr) dispatch_release(handler_queue_);
  }

  Status init() {
    handler_queue_ = dispatch_queue_create("les.io.dispatch_io", DISPATCH_QUEUE_SERIAL);
    if (handler_queue_ == nullptr) return internal_error("dispatch_io backend: dispatch_queue_create failed");
    return Status();
  }

  std::string name() const override { return "dispatch_io"; }

  Result<FileId> open_file(const std::string& path) override {
    LES_ASSIGN_OR_RETURN(FileId id, files_.open(path));
    const int fd = ::dup(files_.find(id)->buffered_fd);
    if (fd < 0) {
      const int err = errno;
      (void)files_.close(id);
      return io_error("dup for dispatch_io channel of '" + path + "': errno " + std::to_string(err) + " (" +
                      std::strerror(err) + ")");
    }
    dispatch_io_t ch = dispatch_io_create(DISPATCH_IO_RANDOM, fd, handler_queue_, ^(int) {
      ::close(fd);
    });
    if (ch == nullptr) {
      ::close(fd);
      (void)files_.close(id);
      return io_error("dispatch_io_create for '" + path + "' failed");
    }
    // One handler call per operation where possible (partial results still handled).
    dispatch_io_set_low_water(ch, SIZE_MAX);
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
      dispatch_io_close(it->second, 0);
      dispatch_release(it->second);
      channels_.erase(it);
    }
    return Status();
  }

  Status register_buffers(std::span<const std::span<std::byte>>) override {
    if (outstanding_ != 0) return invalid_argument_error("register_buffers: requests outstanding");
    return Status();  // dispatch_io has no registered buffers
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
  }

  size_t outstanding() const override { return outstanding_; }
  uint32_t queue_depth() const override { return options_.queue_depth; }

 private:
  // Schedules waiting jobs while fewer than queue_depth are in flight. Caller holds mu_.
  void issue_locked() {
    size_t budget = pending_.size();
    while (budget-- > 0 && !pending_.empty() && in_flight_ < options_.queue_depth) {
      std::shared_ptr<ReadJob> job = pending_.front();
      pending_.pop_front();
      ReadAttempt a = next_attempt(*job);
      int64_t synthetic = 0;
      if (consult_attempt_hook(options_.attempt_hook, *job, a, &synthetic)) {
        route_locked(job, synthetic, a.length);
        continue;
      }
      auto ch = channels_.find(job->request.file);
      if (ch == channels_.end()) {
        route_locked(job, -EBADF, a.length);
        continue;
      }
      ++in_flight_;
      auto got = std::make_shared<size_t>(0);  // bytes delivered by this operation
      const size_t asked = a.length;
      dispatch_io_read(ch->second, static_cast<off_t>(a.offset), asked, handler_queue_,
                       ^(bool done, dispatch_data_t data, int error) {
                         if (data != nullptr) {
                           dispatch_data_apply(data, ^bool(dispatch_data_t, size_t, const void* buf, size_t n) {
                             const size_t room = asked - *got;
                             const size_t take = std::min(n, room);
                             std::memcpy(job->request.dst + job->done + *got, buf, take);
                             *got += take;
                             return true;
                           });
                         }
                         if (!done) return;
                         std::lock_guard<std::mutex> lock(mu_);
                         --in_flight_;
                         // Bytes delivered count first (an error after them recurs on the
                         // re-issued remainder); no bytes: the errno, or end of file.
                         const int64_t result = *got > 0   ? static_cast<int64_t>(*got)
                                                : error != 0 ? -static_cast<int64_t>(error)
                                                             : 0;
                         route_locked(job, result, asked);
                         if (!cancelling_) issue_locked();
                         if (in_flight_ == 0) idle_cv_.notify_all();
                       });
    }
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

  std::mutex mu_;
  std::condition_variable done_cv_;
  std::condition_variable idle_cv_;
  std::unordered_map<FileId, dispatch_io_t> channels_;  // guarded by mu_
  std::deque<std::shared_ptr<ReadJob>> pending_;        // guarded by mu_
  std::vector<FinishedRead> finished_;                  // guarded by mu_
  uint32_t in_flight_ = 0;                              // guarded by mu_
  bool cancelling_ = false;                             // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<IoBackend>> create_dispatch_io_backend(const IoOptions& options) {
  LES_RETURN_IF_ERROR(check_io_options(options, "dispatch_io backend"));
  auto b = std::make_unique<DispatchIoBackend>(options);
  LES_RETURN_IF_ERROR(b->init());
  return std::unique_ptr<IoBackend>(std::move(b));
}

}  // namespace les::io

#endif  // __APPLE__
