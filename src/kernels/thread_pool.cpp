// Fork-join thread pool; see thread_pool.h.
#include "kernels/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>  // _mm_pause (SSE2, baseline x86-64)
#endif

namespace les::kernels {
namespace {

// Iterations the caller spins on pending_ before it yields (about 50-200 us
// depending on the cost of PAUSE).
constexpr int kSpinIterations = 4000;
// PAUSEs between two clock reads of an idle worker's spin.
constexpr int kSpinsPerClockRead = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(_M_X64)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

}  // namespace

int ThreadPool::max_threads() noexcept {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 256 : static_cast<int>(std::min(4u * hw, 1u << 20));
}

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads < 1 ? 1 : n_threads),
      claimed_(std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(n_threads_))) {
  for (int i = 0; i < n_threads_; ++i) claimed_[static_cast<size_t>(i)].store(0, std::memory_order_relaxed);
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::claim(int index, uint64_t generation) {
  std::atomic<uint64_t>& c = claimed_[static_cast<size_t>(index)];
  uint64_t old = c.load(std::memory_order_acquire);
  while (old < generation) {
    if (c.compare_exchange_weak(old, generation, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
  }
  return false;  // range `index` of this job (or a later one) is already taken
}

void ThreadPool::run_range(int index) {
  const Range r = split_range(job_tasks_, n_threads_, index);
  if (r.begin < r.end) (*job_)(r.begin, r.end, index);
}

void ThreadPool::parallel_for(int64_t n_tasks, TaskRef fn) {
  if (n_tasks <= 0) return;
  if (n_threads_ == 1 || n_tasks == 1) {
    fn(0, n_tasks, 0);
    return;
  }
  job_ = &fn;
  job_tasks_ = n_tasks;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  uint64_t g = 0;
  bool wake = false;
  {
    // Publishing under the mutex orders the bump against a worker that is about
    // to sleep (it re-checks the generation under the same mutex).
    std::lock_guard<std::mutex> lock(mu_);
    g = generation_.fetch_add(1, std::memory_order_acq_rel) + 1;
    wake = sleepers_ > 0;
  }
  if (wake) cv_.notify_all();
  run_range(0);
  // Ranges whose worker has not started yet (descheduled on a busy machine,
  // still waking up) are run here, each under its own index; only ranges a
  // worker already claimed are waited for.
  for (int i = 1; i < n_threads_; ++i) {
    if (claim(i, g)) {
      run_range(i);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  // Spin briefly, then yield: with more threads than free cores (shared
  // machines) a pure spin would keep the last worker from being scheduled.
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpinIterations) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  job_ = nullptr;
}

void ThreadPool::worker_main(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t g = generation_.load(std::memory_order_acquire);
    if (g == seen) {
      // Spin for the idle-spin window (the clock read every kSpinsPerClockRead
      // PAUSEs), then sleep.
      const auto window = std::chrono::nanoseconds(idle_spin_ns_.load(std::memory_order_relaxed));
      const auto t0 = std::chrono::steady_clock::now();
      for (int spin = 1; g == seen; ++spin) {
        cpu_relax();
        g = generation_.load(std::memory_order_acquire);
        if (spin % kSpinsPerClockRead == 0 && std::chrono::steady_clock::now() - t0 >= window) break;
      }
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      ++sleepers_;
      cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      --sleepers_;
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    // The caller may have run this range itself (and even finished the job);
    // a claim of generation g succeeds only while job g still waits for it.
    if (claim(index, g)) {
      run_range(index);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
}

}  // namespace les::kernels
