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
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "io/aligned_bytes.h"

namespace les::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Sum of 64-bit words over [p, p + n): SSE2 on x86-64, four independent
// accumulators elsewhere (auto-vectorised), so the sum is never what limits a
// pass over memory.
inline uint64_t load_sum(const uint64_t* p, size_t n) {
#if defined(__x86_64__)
  __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a0 = _mm_add_epi64(a0, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
    a1 = _mm_add_epi64(a1, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 2)));
    a2 = _mm_add_epi64(a2, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 4)));
    a3 = _mm_add_epi64(a3, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 6)));
  }
  const __m128i s = _mm_add_epi64(_mm_add_epi64(a0, a1), _mm_add_epi64(a2, a3));
  uint64_t out[2];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), s);
  uint64_t r = out[0] + out[1];
  for (; i < n; ++i) r += p[i];
  return r;
#else
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += p[i];
    s1 += p[i + 1];
    s2 += p[i + 2];
    s3 += p[i + 3];
  }
  for (; i < n; ++i) s0 += p[i];
  return s0 + s1 + s2 + s3;
#endif
}

// The memory-read bandwidth probe of every bench: a buffer of `bytes` (make it
// several times the last-level cache), every page written at construction,
// read by load-and-sum passes split evenly across threads.
class ReadBandwidthProbe {
 public:
  explicit ReadBandwidthProbe(size_t bytes) : words_(std::max<size_t>(bytes / sizeof(uint64_t), 1)) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] = i;  // touch every page
  }

  // One timed pass over the buffer by `n_threads` threads; bytes/s.
  double pass(int n_threads) {
    const size_t n = words_.size(), nt = static_cast<size_t>(std::max(n_threads, 1));
    std::vector<uint64_t> sums(nt, 0);
    const auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (size_t t = 0; t < nt; ++t) {
      ts.emplace_back([&, t] {
        const size_t begin = n * t / nt, end = n * (t + 1) / nt;
        sums[t] = load_sum(words_.data() + begin, end - begin);
      });
    }
    for (auto& th : ts) th.join();
    const double secs = seconds_since(t0);
    uint64_t total = 0;
    for (uint64_t s : sums) total += s;
    if (total == 42) std::fputs("", stderr);  // keep the sums alive
    return static_cast<double>(n * sizeof(uint64_t)) / secs;
  }

  // The best of `passes` passes; bytes/s.
  double best_of(int passes, int n_threads) {
    double best = 0;
    for (int i = 0; i < passes; ++i) best = std::max(best, pass(n_threads));
    return best;
  }

 private:
  std::vector<uint64_t> words_;
};

// Memory-read bandwidth in bytes/s: best of 3 passes of a 256 MiB
// ReadBandwidthProbe (4x a large L3) across `n_threads` threads.
inline double read_bandwidth(int n_threads) {
  ReadBandwidthProbe probe(size_t{256} << 20);
  return probe.best_of(3, n_threads);
}

// The disk's streaming rate in bytes/s: sequential O_DIRECT preads of 8 MiB
// over the first `bytes` bytes of `path` (fewer if the file ends first), best
// of `passes` passes. Returns -1 when the file cannot be opened with O_DIRECT
// (tmpfs, some overlay file systems), the buffer cannot be allocated, or a
// pass reads nothing.
inline double sequential_read_bandwidth(const std::string& path, uint64_t bytes, int passes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (fd < 0) return -1;
  constexpr size_t kChunk = size_t{8} << 20;
  auto buf = les::io::AlignedBytes::allocate(kChunk, 4096);
  double best = -1;
  for (int rep = 0; buf.ok() && rep < passes; ++rep) {
    uint64_t done = 0;
    const auto t0 = Clock::now();
    while (done < bytes) {
      const ssize_t n = ::pread(fd, buf->data(), kChunk, static_cast<off_t>(done));
      if (n <= 0) break;
      done += static_cast<uint64_t>(n);
    }
    const double secs = seconds_since(t0);
    if (done == 0) break;
    best = std::max(best, static_cast<double>(done) / secs);
  }
  ::close(fd);
  return best;
}

// Reads the whole file at `path` once through the page cache, so its pages
// are resident for a run that maps it (the resident reference of a streaming
// bench). Returns the bytes read, or -1 when the file cannot be opened.
inline int64_t warm_page_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::vector<char> buf(size_t{8} << 20);
  int64_t total = 0;
  for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) > 0;) total += n;
  ::close(fd);
  return total;
}

// The non-empty fields of a comma-separated list ("1,,4" -> {"1", "4"}).
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const size_t end = comma == std::string::npos ? s.size() : comma;
    if (end > start) out.push_back(s.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
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
