// ThreadPool: every task index runs exactly once, on the documented ranges,
// with the calling thread as index 0, across repeated jobs.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kernels/thread_pool.h"

using les::kernels::ThreadPool;

TEST_CASE("parallel_for covers [0, n) once with the documented split", "[kernels][thread_pool]") {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    REQUIRE(pool.n_threads() == threads);
    for (int64_t n : {0, 1, 2, 3, 4, 7, 64, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::vector<std::atomic<int>> ranges_of_thread(static_cast<size_t>(threads));
      std::atomic<bool> bad_range{false};
      const auto caller = std::this_thread::get_id();
      std::atomic<bool> index0_elsewhere{false};
      auto fn = [&](int64_t b, int64_t e, int t) {
        const auto r = ThreadPool::split_range(n, threads, t);
        if (b != r.begin || e != r.end || b >= e) bad_range = true;
        if (t == 0 && std::this_thread::get_id() != caller) index0_elsewhere = true;
        ranges_of_thread[static_cast<size_t>(t)]++;
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      };
      pool.parallel_for(n, fn);
      INFO("threads " << threads << " n " << n);
      CHECK_FALSE(bad_range);
      CHECK_FALSE(index0_elsewhere);
      for (auto& h : hits) CHECK(h == 1);
      for (auto& r : ranges_of_thread) CHECK(r <= 1);
      // The split itself: contiguous, in order, sizes differing by at most one.
      int64_t next = 0;
      for (int t = 0; t < threads; ++t) {
        const auto r = ThreadPool::split_range(n, threads, t);
        CHECK(r.begin == next);
        CHECK(r.end - r.begin >= n / threads);
        CHECK(r.end - r.begin <= n / threads + 1);
        next = r.end;
      }
      CHECK(next == n);
    }
  }
}

TEST_CASE("parallel_for survives many back-to-back jobs", "[kernels][thread_pool]") {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  auto fn = [&](int64_t b, int64_t e, int) { total += e - b; };
  for (int rep = 0; rep < 5000; ++rep) pool.parallel_for(10, fn);
  CHECK(total == 50000);
}

TEST_CASE("ThreadPool with n_threads < 1 runs on the caller", "[kernels][thread_pool]") {
  ThreadPool pool(0);
  CHECK(pool.n_threads() == 1);
  int calls = 0;
  auto fn = [&](int64_t b, int64_t e, int t) {
    CHECK(b == 0);
    CHECK(e == 5);
    CHECK(t == 0);
    ++calls;
  };
  pool.parallel_for(5, fn);
  CHECK(calls == 1);
}

TEST_CASE("oversubscribed pool: each range once per job, one runner per index at a time", "[kernels][thread_pool]") {
  // 8 participants on a machine with fewer cores: the calling thread often runs
  // the ranges of workers that are not scheduled yet (parallel_for's claim).
  const int threads = 8;
  ThreadPool pool(threads);
  std::vector<std::atomic<int>> busy(threads);
  std::atomic<bool> overlap{false}, bad_range{false};
  std::atomic<int64_t> total{0};
  for (int rep = 0; rep < 2000; ++rep) {
    const int64_t n = 1 + rep % 37;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    auto fn = [&](int64_t b, int64_t e, int t) {
      if (busy[static_cast<size_t>(t)].fetch_add(1) != 0) overlap = true;
      const auto r = ThreadPool::split_range(n, threads, t);
      if (b != r.begin || e != r.end) bad_range = true;
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      total += e - b;
      busy[static_cast<size_t>(t)].fetch_sub(1);
    };
    pool.parallel_for(n, fn);
    bool once = true;
    for (auto& h : hits) once = once && h == 1;
    REQUIRE(once);
  }
  CHECK_FALSE(overlap);
  CHECK_FALSE(bad_range);
  int64_t expect = 0;
  for (int rep = 0; rep < 2000; ++rep) expect += 1 + rep % 37;
  CHECK(total == expect);
}

TEST_CASE("set_idle_spin: jobs stay exact with no spin, a long spin, and across sleeps", "[kernels][thread_pool]") {
  ThreadPool pool(3);
  for (auto window : {std::chrono::nanoseconds(-5), std::chrono::nanoseconds(0), std::chrono::nanoseconds(3000000)}) {
    pool.set_idle_spin(window);
    for (int job = 0; job < 200; ++job) {
      std::vector<std::atomic<int>> hits(97);
      auto fn = [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      };
      pool.parallel_for(97, fn);
      for (auto& h : hits) REQUIRE(h == 1);
      // Now and then a gap longer than a short window: workers go to sleep and wake.
      if (job % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}
