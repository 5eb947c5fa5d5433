#include "io/io_uring_backend.h"

#if defined(LES_HAVE_LIBURING)

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <vector>

#include <liburing.h>
#include <sys/uio.h>

#include "io/file_table.h"
#include "io/read_flow.h"
#include "io/io_options_check.h"
#include "io/read_job.h"

namespace les::io {

namespace {

constexpr uint64_t kCancelUserData = ~uint64_t{0};  // CQEs of our cancel SQEs

std::string errno_text(int err) { return std::to_string(err) + " (" + std::strerror(err) + ")"; }

struct Slot {
  ReadJob job;
  ReadAttempt attempt;
  bool busy = false;
};

struct RegisteredRegion {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  uint32_t index = 0;
};

class IoUringBackend final : public IoBackend {
 public:
  explicit IoUringBackend(const IoOptions& o) : options_(o), files_(o.use_direct_io, o.direct_alignment) {}

  ~IoUringBackend() override {
    if (!ring_ready_) return;
    cancel_all();
    io_uring_queue_exit(&ring_);
  }

  Status init() {
    io_uring_params params{};
    const int ret = io_uring_queue_init_params(options_.queue_depth, &ring_, &params);
    if (ret < 0) return unsupported_error("io_uring_queue_init: errno " + errno_text(-ret));
    ring_ready_ = true;
    io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
    const bool has_read = probe != nullptr && io_uring_opcode_supported(probe, IORING_OP_READ) &&
                          io_uring_opcode_supported(probe, IORING_OP_ASYNC_CANCEL);
    if (probe != nullptr) io_uring_free_probe(probe);
    if (!has_read) return unsupported_error("io_uring: kernel lacks IORING_OP_READ (needs Linux 5.6+)");
    slots_.resize(options_.queue_depth);
    for (uint32_t i = options_.queue_depth; i-- > 0;) free_slots_.push_back(i);
    return Status();
  }

  std::string name() const override { return "io_uring"; }
  Result<FileId> open_file(const std::string& path) override { return files_.open(path); }
  Result<FileInfo> file_info(FileId file) const override { return files_.info(file); }
  Status close_file(FileId file) override { return files_.close(file); }

  Status register_buffers(std::span<const std::span<std::byte>> regions) override {
    if (outstanding_ != 0) return invalid_argument_error("register_buffers: requests outstanding");
    if (!regions_.empty()) {
      io_uring_unregister_buffers(&ring_);
      regions_.clear();
    }
    if (regions.empty()) return Status();
    std::vector<iovec> iov;
    iov.reserve(regions.size());
    for (const auto& r : regions) iov.push_back({r.data(), r.size()});
    const int ret = io_uring_register_buffers(&ring_, iov.data(), static_cast<unsigned>(iov.size()));
    if (ret < 0) {
      return unsupported_error("io_uring_register_buffers (" + std::to_string(iov.size()) +
                               " regions): errno " + errno_text(-ret) + "; reads stay unregistered");
    }
    for (uint32_t i = 0; i < regions.size(); ++i) {
      const auto b = reinterpret_cast<uintptr_t>(regions[i].data());
      regions_.push_back({b, b + regions[i].size(), i});
    }
    std::sort(regions_.begin(), regions_.end(),
              [](const RegisteredRegion& a, const RegisteredRegion& b) { return a.begin < b.begin; });
    return Status();
  }

  Status submit(std::span<const ReadRequest> requests) override {
    LES_RETURN_IF_ERROR(validate_batch(requests, files_));
    admit_batch(requests, files_, options_.direct_alignment, ready_,
                [&](ReadJob&& job) { pending_.push_back(std::move(job)); });
    outstanding_ += requests.size();
    pump();
    return Status();
  }

  Status reap(size_t min_complete, std::chrono::nanoseconds timeout,
              std::vector<ReadCompletion>& out) override {
    min_complete = std::min(min_complete, outstanding_);
    const auto deadline = deadline_after(timeout);
    size_t got = 0;
    for (;;) {
      drain_cqes();
      pump();
      got += hand_out_finished(ready_, files_, &outstanding_, out);
      if (got >= min_complete || outstanding_ == 0) break;
      if (in_kernel_ == 0) continue;  // only requeued work left: pump issues it
      LES_RETURN_IF_ERROR(flush_sq());
      if (in_kernel_ == 0 || !ready_.empty()) continue;  // flush_sq reaped something
      io_uring_cqe* cqe = nullptr;
      int ret = 0;
      if (deadline == std::chrono::steady_clock::time_point::max()) {
        ret = io_uring_wait_cqe(&ring_, &cqe);
      } else {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::nanoseconds::zero()) break;
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        __kernel_timespec ts{};
        ts.tv_sec = ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        ret = io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
      }
      if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN) {
        return internal_error("io_uring wait for completions: errno " + errno_text(-ret));
      }
    }
    return Status();
  }

  void cancel_all() override {
    cancelling_ = true;
    for (ReadJob& j : pending_) ready_.push_back({cancelled_completion(j), j.request.file});
    pending_.clear();
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      if (!slots_[i].busy) continue;
      io_uring_sqe* sqe = get_sqe();
      if (sqe == nullptr) break;  // cannot happen after a submit; the reads finish on their own anyway
      io_uring_prep_cancel64(sqe, i, 0);
      io_uring_sqe_set_data64(sqe, kCancelUserData);
    }
    (void)flush_sq();
    while (in_kernel_ > 0) {
      io_uring_cqe* cqe = nullptr;
      const int ret = io_uring_wait_cqe(&ring_, &cqe);
      if (ret < 0 && ret != -EINTR && ret != -EAGAIN) break;  // ring broken: nothing more will arrive
      drain_cqes();
    }
    drain_cqes();  // cancel CQEs that came after the last read's
    cancelling_ = false;
  }

  size_t outstanding() const override { return outstanding_; }
  uint32_t queue_depth() const override { return options_.queue_depth; }

 private:
  io_uring_sqe* get_sqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  // Submits SQEs still sitting in the SQ ring (an earlier io_uring_submit may
  // have stopped on a transient EAGAIN/EBUSY/EINTR), so a wait cannot sleep on
  // reads the kernel never saw. Errors: internal for any other submit failure.
  Status flush_sq() {
    while (io_uring_sq_ready(&ring_) > 0) {
      const int ret = io_uring_submit(&ring_);
      if (ret >= 0) continue;
      if (ret == -EAGAIN || ret == -EBUSY || ret == -EINTR) {
        drain_cqes();  // make room in the CQ, then retry
        continue;
      }
      return internal_error("io_uring_submit: errno " + errno_text(-ret));
    }
    return Status();
  }

  // Registered buffer index holding [p, p + n), or -1.
  int registered_index(const std::byte* p, size_t n) const {
    if (regions_.empty()) return -1;
    const auto b = reinterpret_cast<uintptr_t>(p);
    auto it = std::upper_bound(regions_.begin(), regions_.end(), b,
                               [](uintptr_t v, const RegisteredRegion& r) { return v < r.begin; });
    if (it == regions_.begin()) return -1;
    --it;
    return (b >= it->begin && b + n <= it->end) ? static_cast<int>(it->index) : -1;
  }

  // Routes one attempt's result for `job` (route_attempt): finished -> ready_,
  // the rest of a short read -> front of pending_, a retry -> back of pending_.
  void route(ReadJob& job, int64_t result, size_t asked) {
    bool issue_next = false;
    if (std::optional<FinishedRead> fin = route_attempt(job, result, asked, cancelling_, &issue_next)) {
      ready_.push_back(std::move(*fin));
    } else if (issue_next) {
      pending_.push_front(std::move(job));
    } else {
      pending_.push_back(std::move(job));
    }
  }

  // Moves pending jobs into free slots as SQEs and submits them. Each job
  // present at entry is looked at once, so a hook that keeps answering EAGAIN
  // cannot spin here.
  void pump() {
    size_t budget = pending_.size();
    bool prepared = false;
    while (budget-- > 0 && !pending_.empty() && !free_slots_.empty()) {
      ReadJob job = std::move(pending_.front());
      pending_.pop_front();
      ReadAttempt a = next_attempt(job);
      int64_t synthetic = 0;
      if (consult_attempt_hook(options_.attempt_hook, job, a, &synthetic)) {
        route(job, synthetic, a.length);
        continue;
      }
      io_uring_sqe* sqe = get_sqe();
      if (sqe == nullptr) {
        pending_.push_front(std::move(job));
        break;
      }
      const uint32_t s = free_slots_.back();
      free_slots_.pop_back();
      const int fixed = registered_index(a.dst, a.length);
      const auto len = static_cast<unsigned>(a.length);
      if (fixed >= 0) {
        io_uring_prep_read_fixed(sqe, a.fd, a.dst, len, a.offset, fixed);
      } else {
        io_uring_prep_read(sqe, a.fd, a.dst, len, a.offset);
      }
      io_uring_sqe_set_data64(sqe, s);
      slots_[s].job = std::move(job);
      slots_[s].attempt = a;
      slots_[s].busy = true;
      ++in_kernel_;
      prepared = true;
    }
    if (prepared) io_uring_submit(&ring_);
  }

  // Processes every CQE available now.
  void drain_cqes() {
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
      const uint64_t ud = io_uring_cqe_get_data64(cqe);
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if (ud == kCancelUserData || ud >= slots_.size() || !slots_[ud].busy) continue;
      Slot& slot = slots_[ud];
      slot.busy = false;
      --in_kernel_;
      free_slots_.push_back(static_cast<uint32_t>(ud));
      route(slot.job, res, slot.attempt.length);
    }
  }

  IoOptions options_;
  FileTable files_;
  io_uring ring_{};
  bool ring_ready_ = false;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::deque<ReadJob> pending_;
  std::vector<FinishedRead> ready_;
  std::vector<RegisteredRegion> regions_;  // sorted by begin
  size_t outstanding_ = 0;  // accepted and not yet handed out
  size_t in_kernel_ = 0;    // busy slots
  bool cancelling_ = false;
};

}  // namespace

Result<std::unique_ptr<IoBackend>> create_io_uring_backend(const IoOptions& options) {
  LES_RETURN_IF_ERROR(check_io_options(options, "io_uring backend"));
  auto b = std::make_unique<IoUringBackend>(options);
  LES_RETURN_IF_ERROR(b->init());
  return std::unique_ptr<IoBackend>(std::move(b));
}

}  // namespace les::io

#else  // !LES_HAVE_LIBURING

namespace les::io {

Result<std::unique_ptr<IoBackend>> create_io_uring_backend(const IoOptions&) {
  return unsupported_error("io_uring backend: this build has no liburing");
}

}  // namespace les::io

#endif
