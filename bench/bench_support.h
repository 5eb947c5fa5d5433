// Shared measurement helpers of the bench/ binaries: the bounds every speed is
// reported against, measured in the same run.
//
// Thread-safety: the functions start and join their own threads; call them
// from one thread at a time.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace les::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Memory-read bandwidth in bytes/s: best of 3 load-and-sum passes over a
// 256 MiB buffer (4x a large L3) split across `n_threads` threads.
inline double read_bandwidth(int n_threads) {
  const size_t n_words = (size_t{256} << 20) / sizeof(uint64_t);
  std::vector<uint64_t> buf(n_words);
  for (size_t i = 0; i < n_words; ++i) buf[i] = i;  // touch every page
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<uint64_t> sums(static_cast<size_t>(n_threads), 0);
    auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < n_threads; ++t) {
      ts.emplace_back([&, t] {
        const size_t begin = n_words * static_cast<size_t>(t) / static_cast<size_t>(n_threads);
        const size_t end = n_words * static_cast<size_t>(t + 1) / static_cast<size_t>(n_threads);
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        size_t i = begin;
        for (; i + 4 <= end; i += 4) {
          s0 += buf[i];
          s1 += buf[i + 1];
          s2 += buf[i + 2];
          s3 += buf[i + 3];
        }
        for (; i < end; ++i) s0 += buf[i];
        sums[static_cast<size_t>(t)] = s0 + s1 + s2 + s3;
      });
    }
    for (auto& th : ts) th.join();
    const double secs = seconds_since(t0);
    uint64_t total = 0;
    for (uint64_t s : sums) total += s;
    if (total == 42) std::fputs("", stderr);  // keep the sums alive
    best = std::max(best, static_cast<double>(n_words * sizeof(uint64_t)) / secs);
  }
  return best;
}

// 1-minute load average, or -1 when unavailable.
inline double load_average() {
  double la[1] = {0};
  return getloadavg(la, 1) == 1 ? la[0] : -1.0;
}

// Peak resident set size of this process so far, in bytes (getrusage).
inline double peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) * 1024.0;
}

}  // namespace les::bench
