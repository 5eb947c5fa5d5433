// A small fork-join thread pool for the kernels (matvec/matmul row splits).
//
// Owned by the caller (an engine/context object), never global (DEVELOPERS.md, Conventions: no globals).
// `ThreadPool(n)` starts n - 1 worker threads; the thread that calls
// parallel_for() is the n-th participant and takes index 0. Workers spin for a
// short while after each job (decode issues many small jobs back to back; the
// window is set_idle_spin()) and then sleep on a condition variable, so an idle
// pool costs no CPU.
//
// Thread-safety: parallel_for() may be called by one thread at a time (it is
// not re-entrant and must not be called from inside a task). Construction and
// destruction are not concurrent with parallel_for().
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace les::kernels {

class ThreadPool {
 public:
  // A non-owning reference to a callable `void(int64_t begin, int64_t end, int thread_index)`.
  // The callable must outlive the parallel_for() call and must not throw.
  class TaskRef {
   public:
    template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, TaskRef>>>
    TaskRef(F& f)  // NOLINT: implicit by design
        : obj_(static_cast<void*>(&f)), call_([](void* o, int64_t b, int64_t e, int t) {
            (*static_cast<F*>(o))(b, e, t);
          }) {}
    void operator()(int64_t b, int64_t e, int t) const { call_(obj_, b, e, t); }

   private:
    void* obj_;
    void (*call_)(void*, int64_t, int64_t, int);
  };

  // n_threads >= 1 participants in total (values < 1 are treated as 1). The
  // model and context refuse counts above max_threads() before they get here
  // (core/model/thread_count.h).
  explicit ThreadPool(int n_threads);

  // The most participants a pool may have: 4 x std::thread::hardware_concurrency()
  // (256 when the hardware count is unknown). More threads than hardware threads
  // only time-slice the same cores (5000 on a 2-core machine: 52 s per token),
  // and starting tens of thousands stalls the process for minutes.
  // Thread-safe.
  static int max_threads() noexcept;
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // How long an idle worker spins for the next job before it sleeps on a
  // condition variable (default kDefaultIdleSpin). A longer window keeps the
  // workers awake across gaps the caller spends elsewhere (waiting for expert
  // reads), so the next job starts on every thread at once instead of after a
  // wake-up (tens to hundreds of microseconds in a VM), at the price of CPU
  // burnt while idle. Thread-safe; takes effect at a worker's next idle spell.
  void set_idle_spin(std::chrono::nanoseconds window) noexcept {
    idle_spin_ns_.store(std::max<int64_t>(0, window.count()), std::memory_order_relaxed);
  }
  // About what 4000 PAUSEs took before the window was a time: enough to catch
  // the next matvec of the same decode step without burning a shared core for long.
  static constexpr std::chrono::nanoseconds kDefaultIdleSpin = std::chrono::microseconds(100);

  // Total participants, including the calling thread.
  int n_threads() const noexcept { return n_threads_; }

  // Splits [0, n_tasks) into n_threads() contiguous ranges (split_range) and
  // runs fn(begin, end, i) exactly once for every non-empty range i, range 0 on
  // the calling thread. Returns when all are done. The split depends only on
  // n_tasks and n_threads(), never on timing; which thread runs range i > 0
  // does: worker i if it claims the range first, else the calling thread after
  // range 0 (so a worker that is not scheduled, on a loaded machine, delays
  // nothing). i is an exclusive slot either way: no two ranges with the same i
  // run at once, so per-index scratch stays private. n_tasks <= 0 does nothing.
  void parallel_for(int64_t n_tasks, TaskRef fn);

  struct Range {
    int64_t begin, end;
  };
  // Range i of n_tasks split n_threads ways: the first n_tasks % n_threads
  // ranges hold one task more than the others, in order (so with fewer tasks
  // than threads the calling thread always has work).
  static Range split_range(int64_t n_tasks, int n_threads, int i) {
    const int64_t base = n_tasks / n_threads, rem = n_tasks % n_threads;
    const int64_t begin = base * i + (i < rem ? i : rem);
    return {begin, begin + base + (i < rem ? 1 : 0)};
  }

 private:
  void worker_main(int index);
  void run_range(int index);
  // Takes range `index` of job `generation` for the calling thread; false if
  // someone already took it.
  bool claim(int index, uint64_t generation);

  int n_threads_;
  std::vector<std::thread> workers_;

  // Current job; written by the caller before bumping generation_.
  TaskRef* job_ = nullptr;
  int64_t job_tasks_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  // claimed_[i]: the latest generation whose range i someone has taken.
  std::unique_ptr<std::atomic<uint64_t>[]> claimed_;

  std::mutex mu_;
  std::condition_variable cv_;
  int sleepers_ = 0;  // workers waiting on cv_ (guarded by mu_)
  std::atomic<int64_t> idle_spin_ns_{kDefaultIdleSpin.count()};
};

}  // namespace les::kernels
