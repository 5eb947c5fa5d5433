// Random-read throughput and latency of the I/O backends (io_uring, pread, and
// dispatch_io where built) at several queue depths and read sizes, next to the
// disk's sequential-read bound measured in the same run.
//
//   bench_io [--json] [--dir DIR] [--file-mib 2048] [--mib-per-config 128]
//            [--qd 1,4,16,64] [--sizes-kib 64,256,1024] [--backends io_uring,pread[,dispatch_io]]
//
// Setup: writes a file of --file-mib MiB of pseudo-random bytes in DIR
// (default: $TMPDIR or /tmp), fdatasyncs it and drops it from the page cache
// (posix_fadvise DONTNEED). Every backend opens it with O_DIRECT when the file
// system allows it (reported per row as "o_direct"); without O_DIRECT the
// cache is dropped again before each configuration, and the numbers may
// include page-cache hits.
//
// Per configuration: reads of `size` bytes at uniformly random 4 KiB-aligned
// offsets into registered pool buffers, exactly `qd` in flight (a completed
// read is replaced at once), --mib-per-config MiB in total after a warmup of
// 2*qd reads. MB/s = bytes / wall time (MB = 1e6 bytes); latency = submit ->
// reap of each read (p50, p99, microseconds).
//
// Bound: one large sequential O_DIRECT read (pread of 8 MiB chunks over the
// first min(file, 1 GiB)), best of 3, in MB/s: the disk's streaming rate.
// Random reads at high queue depth can come near it; quote ratios against it.
//
// It measures and prints; it asserts nothing. The temp file is deleted at exit.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bench_support.h"
#include "support/aligned_buffer_pool.h"
#include "io/io_factory.h"

namespace {

using Clock = std::chrono::steady_clock;
using les::bench::split;
using les::io::IoBackendKind;

struct Args {
  bool json = false;
  std::string dir;
  uint64_t file_mib = 2048;
  uint64_t mib_per_config = 128;
  std::vector<uint32_t> qds{1, 4, 16, 64};
  std::vector<uint32_t> sizes_kib{64, 256, 1024};
#if defined(LES_HAVE_DISPATCH_IO)
  std::vector<std::string> backends{"io_uring", "pread", "dispatch_io"};
#else
  std::vector<std::string> backends{"io_uring", "pread"};
#endif
};

std::vector<uint32_t> split_u32(const std::string& s) {
  std::vector<uint32_t> out;
  for (const auto& p : split(s)) out.push_back(static_cast<uint32_t>(std::strtoul(p.c_str(), nullptr, 10)));
  return out;
}

bool parse_args(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--json") a->json = true;
    else if (k == "--dir") a->dir = next();
    else if (k == "--file-mib") a->file_mib = std::strtoull(next().c_str(), nullptr, 10);
    else if (k == "--mib-per-config") a->mib_per_config = std::strtoull(next().c_str(), nullptr, 10);
    else if (k == "--qd") a->qds = split_u32(next());
    else if (k == "--sizes-kib") a->sizes_kib = split_u32(next());
    else if (k == "--backends") a->backends = split(next());
    else {
      std::fprintf(stderr,
                   "usage: bench_io [--json] [--dir DIR] [--file-mib N] [--mib-per-config N] "
                   "[--qd 1,4,16,64] [--sizes-kib 64,256,1024] [--backends io_uring,pread,dispatch_io]\n");
      return false;
    }
  }
  if (a->dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    a->dir = (t && *t) ? t : "/tmp";
  }
  return a->file_mib > 0 && a->mib_per_config > 0 && !a->qds.empty() && !a->sizes_kib.empty();
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  }
  return "unknown";
}

// Writes `bytes` of pseudo-random data, syncs, drops it from the page cache.
bool write_test_file(const std::string& path, uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::vector<uint64_t> chunk((8u << 20) / sizeof(uint64_t));
  std::mt19937_64 rng(1);
  for (uint64_t done = 0; done < bytes;) {
    for (auto& w : chunk) w = rng();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size() * 8, bytes - done));
    const ssize_t w = ::write(fd, chunk.data(), n);
    if (w <= 0) {
      ::close(fd);
      return false;
    }
    done += static_cast<uint64_t>(w);
  }
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return true;
}

void drop_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

struct Row {
  std::string backend;
  uint32_t qd = 0;
  uint32_t size_kib = 0;
  uint64_t reads = 0;
  double mb_per_s = 0;
  double p50_us = 0;
  double p99_us = 0;
  bool o_direct = false;
  uint64_t errors = 0;
  std::string note;
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

Row run_config(const std::string& backend_name, uint32_t qd, uint32_t size_kib, const std::string& path,
               uint64_t file_bytes, uint64_t total_bytes) {
  Row row;
  row.backend = backend_name;
  row.qd = qd;
  row.size_kib = size_kib;
  auto kind = les::io::parse_io_backend_kind(backend_name);
  if (!kind.ok()) {
    row.note = kind.status().to_string();
    return row;
  }
  les::io::IoOptions opts;
  opts.queue_depth = qd;
  auto backend_r = les::io::create_io_backend(*kind, opts);
  if (!backend_r.ok()) {
    row.note = backend_r.status().to_string();
    return row;
  }
  auto& backend = *backend_r.value();
  const size_t size = size_t{size_kib} * 1024;
  auto pool = les::io::AlignedBufferPool::create(size, qd);
  if (!pool.ok()) {
    row.note = pool.status().to_string();
    return row;
  }
  const auto regions = pool->regions();
  (void)backend.register_buffers(regions);  // an optimisation; unsupported is fine
  auto file = backend.open_file(path);
  if (!file.ok()) {
    row.note = file.status().to_string();
    return row;
  }
  row.o_direct = backend.file_info(*file)->direct_io;
  if (!row.o_direct) drop_cache(path);

  std::mt19937_64 rng(size_kib * 131 + qd);
  const uint64_t slots = (file_bytes - size) / 4096;
  const uint64_t warmup = 2ull * qd;
  const uint64_t measured = std::max<uint64_t>(total_bytes / size, 64);
  const uint64_t total = warmup + measured;
  std::vector<Clock::time_point> submitted(qd);
  std::vector<double> lat_us;
  lat_us.reserve(measured);
  uint64_t issued = 0;
  uint64_t finished = 0;
  Clock::time_point t0;
  auto issue = [&](uint32_t slot) {
    les::io::ReadRequest r;
    r.tag = slot;
    r.file = *file;
    r.offset = 4096 * (rng() % slots);
    r.length = size;
    r.dst = regions[slot].data();
    submitted[slot] = Clock::now();
    ++issued;
    return backend.submit({&r, 1});
  };
  for (uint32_t s = 0; s < qd && issued < total; ++s) (void)issue(s);
  std::vector<les::io::ReadCompletion> done;
  while (finished < total) {
    done.clear();
    if (!backend.reap(1, les::io::kWaitForever, done).ok()) break;
    const auto now = Clock::now();
    for (const auto& c : done) {
      if (!c.status.ok()) ++row.errors;
      ++finished;
      if (finished == warmup) t0 = now;
      if (finished > warmup) {
        lat_us.push_back(std::chrono::duration<double, std::micro>(now - submitted[c.tag]).count());
      }
      if (issued < total) (void)issue(static_cast<uint32_t>(c.tag));
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  row.reads = lat_us.size();
  row.mb_per_s = static_cast<double>(row.reads * size) / secs / 1e6;
  row.p50_us = percentile(lat_us, 0.50);
  row.p99_us = percentile(lat_us, 0.99);
  (void)backend.close_file(*file);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, &args)) return 2;
  const std::string path = args.dir + "/les-bench-io-" + std::to_string(::getpid()) + ".bin";
  const uint64_t file_bytes = args.file_mib << 20;
  std::fprintf(stderr, "bench_io: writing %llu MiB to %s ...\n",
               static_cast<unsigned long long>(args.file_mib), path.c_str());
  if (!write_test_file(path, file_bytes)) {
    std::fprintf(stderr, "bench_io: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    ::unlink(path.c_str());
    return 1;
  }
  // Best of 3 sequential O_DIRECT passes over the first min(file, 1 GiB), in
  // whole 8 MiB chunks; MB/s, or negative when O_DIRECT is refused.
  constexpr uint64_t kChunk = uint64_t{8} << 20;
  const uint64_t span = std::min<uint64_t>(file_bytes, uint64_t{1} << 30) / kChunk * kChunk;
  const double bound_bps = les::bench::sequential_read_bandwidth(path, span, 3);
  const double bound = bound_bps > 0 ? bound_bps / 1e6 : -1;
  drop_cache(path);

  std::vector<Row> rows;
  for (const auto& b : args.backends) {
    for (uint32_t size_kib : args.sizes_kib) {
      for (uint32_t qd : args.qds) {
        rows.push_back(run_config(b, qd, size_kib, path, file_bytes, args.mib_per_config << 20));
        const Row& r = rows.back();
        std::fprintf(stderr, "  %-8s qd %3u size %5u KiB: %8.1f MB/s p50 %8.1f us p99 %8.1f us %s\n",
                     r.backend.c_str(), r.qd, r.size_kib, r.mb_per_s, r.p50_us, r.p99_us, r.note.c_str());
      }
    }
  }
  ::unlink(path.c_str());

  utsname u{};
  ::uname(&u);
  if (args.json) {
    nlohmann::json j;
    j["bench"] = "io";
    j["cpu"] = cpu_model();
    j["kernel"] = std::string(u.release);
    j["file"] = {{"dir", args.dir}, {"mib", args.file_mib}};
    j["mib_per_config"] = args.mib_per_config;
    j["bound"] = {{"what", "sequential O_DIRECT pread, 8 MiB chunks, first min(file,1GiB), best of 3"},
                  {"mb_per_s", bound}};
    j["latency"] = "submit to reap per read, microseconds";
    for (const Row& r : rows) {
      nlohmann::json o = {{"backend", r.backend}, {"qd", r.qd},           {"size_kib", r.size_kib},
                          {"reads", r.reads},     {"mb_per_s", r.mb_per_s}, {"p50_us", r.p50_us},
                          {"p99_us", r.p99_us},   {"o_direct", r.o_direct}, {"errors", r.errors},
                          {"ratio_to_bound", bound > 0 ? r.mb_per_s / bound : 0.0}};
      if (!r.note.empty()) o["note"] = r.note;
      j["results"].push_back(o);
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("cpu: %s, kernel %s, file %llu MiB in %s\n", cpu_model().c_str(), u.release,
                static_cast<unsigned long long>(args.file_mib), args.dir.c_str());
    std::printf("bound: sequential O_DIRECT read (8 MiB preads, best of 3): %.1f MB/s\n", bound);
    std::printf("%-9s %4s %9s %8s %10s %10s %10s %6s %8s %6s\n", "backend", "qd", "size_KiB", "reads",
                "MB/s", "p50_us", "p99_us", "direct", "x_bound", "errors");
    for (const Row& r : rows) {
      std::printf("%-9s %4u %9u %8llu %10.1f %10.1f %10.1f %6s %8.2f %6llu %s\n", r.backend.c_str(), r.qd,
                  r.size_kib, static_cast<unsigned long long>(r.reads), r.mb_per_s, r.p50_us, r.p99_us,
                  r.o_direct ? "yes" : "no", bound > 0 ? r.mb_per_s / bound : 0.0,
                  static_cast<unsigned long long>(r.errors), r.note.c_str());
    }
  }
  return 0;
}
