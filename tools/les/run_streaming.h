// `les run --budget-mb N`: generation with routed experts streamed from the
// file under a memory budget (src/sched), through the C++ API (les.h does not
// expose the scheduler yet). Called by cmd_run.cpp after its argument checks.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sampler.h"

namespace les::tool {

struct StreamingRunOptions {
  std::string model;
  std::string prompt;
  int32_t n_predict = 128;
  int32_t n_ctx = 0;
  int n_threads = 0;
  bool ignore_eos = false;
  std::vector<std::string> stop;
  SamplerParams sp;
  double budget_mb = 0;            // > 0: stream experts under this budget (MiB)
  int32_t prefetch_c = -1;         // -1 = k + 2, 0 = no lookahead, else k..2k
  std::string io = "auto";         // auto | pread | io_uring
  std::string eviction = "lfu_aged";
  bool stats = false;              // print scheduler statistics to stderr
};

// Runs the generation; `emit` prints a piece of text. Returns the exit code
// (0 ok, 1 runtime error, 2 bad arguments such as a budget below the minimum).
int run_streaming(const StreamingRunOptions& o, const std::function<void(std::string_view)>& emit,
                  double (*peak_rss_mib)());

}  // namespace les::tool
