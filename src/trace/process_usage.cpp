// ProcessUsage; see process_usage.h.
#include "trace/process_usage.h"

#include <cstdio>
#include <string>

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

namespace les::trace {
namespace {

// Seconds this process's live threads spent runnable but not running (the
// second field of /proc/self/task/TID/schedstat, nanoseconds). 0 where the
// kernel has no schedstat.
double run_delay_now() {
  double total = 0;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      unsigned long long run = 0, wait = 0;
      if (std::fscanf(f, "%llu %llu", &run, &wait) == 2) total += 1e-9 * static_cast<double>(wait);
      std::fclose(f);
    }
  }
  closedir(d);
  return total;
}

// Non-idle CPU seconds of the whole machine since boot (/proc/stat "cpu"
// line: every field but idle and iowait; guest time is inside user). 0 if unreadable.
double machine_busy_now() {
  FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return 0;
  unsigned long long v[8] = {};
  const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                            &v[5], &v[6], &v[7]);
  std::fclose(f);
  if (n != 8) return 0;
  const double ticks = static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
  const long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? ticks / static_cast<double>(hz) : 0;
}

}  // namespace

ProcessUsage process_usage_now() {
  rusage ru{};
  ProcessUsage u;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return u;
  u.user = static_cast<double>(ru.ru_utime.tv_sec) + 1e-6 * static_cast<double>(ru.ru_utime.tv_usec);
  u.sys = static_cast<double>(ru.ru_stime.tv_sec) + 1e-6 * static_cast<double>(ru.ru_stime.tv_usec);
  u.major_faults = static_cast<uint64_t>(ru.ru_majflt);
  u.involuntary_switches = static_cast<uint64_t>(ru.ru_nivcsw);
  u.run_delay = run_delay_now();
  u.machine_busy = machine_busy_now();
  return u;
}

}  // namespace les::trace
