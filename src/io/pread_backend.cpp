#include "io/pread_backend.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <unistd.h>

#include "io/file_table.h"
#include "io/read_flow.h"
#include "io/io_options_check.h"
#include "io/read_job.h"

namespace les::io {

namespace {

constexpr uint32_t kMaxPreadThreads = 64;

class PreadBackend final : public IoBackend {
 public:
  explicit PreadBackend(const IoOptions& o)
      : options_(o), files_(o.use_direct_io, o.direct_alignment) {}

  ~PreadBackend() override {
    cancel_all();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  Status start() {
    const uint32_t n = std::min(options_.queue_depth, kMaxPreadThreads);
    try {
      for (uint32_t i = 0; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::system_error& e) {
      return internal_error(std::string("pread backend: starting worker threads: ") + e.what());
    }
    return Status();
  }

  std::string name() const override { return "pread"; }
  Result<FileId> open_file(const std::string& path) override { return files_.open(path); }
  Result<FileInfo> file_info(FileId file) const override { return files_.info(file); }
  Status close_file(FileId file) override { return files_.close(file); }
  Status register_buffers(std::span<const std::span<std::byte>>) override {
    if (outstanding_ != 0) return invalid_argument_error("register_buffers: requests outstanding");
    return Status();  // nothing to register for pread
  }

  Status submit(std::span<const ReadRequest> requests) override {
    LES_RETURN_IF_ERROR(validate_batch(requests, files_));
    {
      std::lock_guard<std::mutex> lock(mu_);
      admit_batch(requests, files_, options_.direct_alignment, finished_,
                  [&](ReadJob&& job) { queue_.push_back(std::move(job)); });
    }
    outstanding_ += requests.size();
    work_cv_.notify_all();
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
    cancel_epoch_.fetch_add(1);
    for (ReadJob& j : queue_) finished_.push_back({cancelled_completion(j), j.request.file});
    queue_.clear();
    idle_cv_.wait(lock, [&] { return busy_ == 0; });
  }

  size_t outstanding() const override { return outstanding_; }
  uint32_t queue_depth() const override { return options_.queue_depth; }

 private:
  void worker_loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      ReadJob job = std::move(queue_.front());
      queue_.pop_front();
      const uint64_t epoch = cancel_epoch_.load();
      ++busy_;
      lock.unlock();
      bool requeue = false;
      FinishedRead fin;
      fin.file = job.request.file;
      run_job(job, epoch, &requeue, &fin.completion);
      lock.lock();
      if (requeue && cancel_epoch_.load() == epoch) {
        queue_.push_back(std::move(job));
        work_cv_.notify_one();
      } else {
        if (requeue) fin.completion = cancelled_completion(job);
        finished_.push_back(std::move(fin));
        done_cv_.notify_all();
      }
      if (--busy_ == 0) idle_cv_.notify_all();
    }
  }

  // Reads until the job finishes (fills *c) or needs requeueing (EAGAIN).
  void run_job(ReadJob& job, uint64_t epoch, bool* requeue, ReadCompletion* c) {
    for (;;) {
      if (cancel_epoch_.load() != epoch) {
        *c = cancelled_completion(job);
        return;
      }
      ReadAttempt a = next_attempt(job);
      int64_t result = 0;
      if (!consult_attempt_hook(options_.attempt_hook, job, a, &result)) {
        const ssize_t n = ::pread(a.fd, a.dst, a.length, static_cast<off_t>(a.offset));
        result = n >= 0 ? static_cast<int64_t>(n) : -static_cast<int64_t>(errno);
      }
      switch (apply_attempt_result(job, result, a.length, c)) {
        case AttemptOutcome::finished: return;
        case AttemptOutcome::advance: continue;
        case AttemptOutcome::retry:
          if (result == -EINTR) continue;
          *requeue = true;
          return;
      }
    }
  }

  IoOptions options_;
  FileTable files_;          // submitter thread only
  size_t outstanding_ = 0;   // submitter thread only

  std::mutex mu_;
  std::condition_variable work_cv_;  // queue_ non-empty or stop_
  std::condition_variable done_cv_;  // finished_ non-empty
  std::condition_variable idle_cv_;  // busy_ == 0
  std::deque<ReadJob> queue_;        // guarded by mu_
  std::vector<FinishedRead> finished_;  // guarded by mu_
  size_t busy_ = 0;                  // guarded by mu_
  bool stop_ = false;                // guarded by mu_
  std::atomic<uint64_t> cancel_epoch_{0};
  std::vector<std::thread> workers_;
};

}  // namespace

Result<std::unique_ptr<IoBackend>> create_pread_backend(const IoOptions& options) {
  LES_RETURN_IF_ERROR(check_io_options(options, "pread backend"));
  auto b = std::make_unique<PreadBackend>(options);
  LES_RETURN_IF_ERROR(b->start());
  return std::unique_ptr<IoBackend>(std::move(b));
}

}  // namespace les::io
