// ProcessUsage: a snapshot of this process's CPU use and of the machine's, for
// benchmarks that must tell their own compute from time they lost to others
// (bench_trace's end-to-end replay, bench_stream). Two snapshots are
// subtracted around a timed region.
//
// Linux only in substance: /proc/self/task/*/schedstat (run-queue wait) and
// /proc/stat (machine busy time); a field reads 0 where its source is missing.
//
// Thread-safety: process_usage_now() is reentrant; it only reads files.
#pragma once

#include <cstdint>

namespace les::trace {

struct ProcessUsage {
  double user = 0, sys = 0;          // this process's CPU seconds (getrusage, every thread, live or joined)
  uint64_t major_faults = 0;         // getrusage ru_majflt
  double run_delay = 0;              // seconds this process's live threads were runnable but not running
  double machine_busy = 0;           // every CPU's non-idle seconds since boot (/proc/stat)
  uint64_t involuntary_switches = 0; // getrusage ru_nivcsw
};

// Takes one snapshot now.
ProcessUsage process_usage_now();

}  // namespace les::trace
