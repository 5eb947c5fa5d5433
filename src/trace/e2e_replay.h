// End-to-end trace replay: a real forward pass over a model file whose shape
// matches a recorded routing trace (the 30B-A3B-shaped synthetic file for the
// Qwen3-30B-A3B trace), computing exactly the trace's experts for every
// (token, layer) (TraceRouting through the bench-only routing override),
// reading them from disk under the expert budget with LES's cache, policy,
// lookahead and I/O reactor, so decode tok/s, bytes read per token, hit rate
// and I/O wait are measured under real routing.
//
// The lookahead predictor cannot run for real (the synthetic model's hidden
// states are not the recorded model's): it still runs (its compute cost
// stays), and its candidates are then replaced by a simulated predictor of
// recall r (TraceRouting::predict). With prefetch_c = 0 there is no
// lookahead (on-demand reads).
//
// Run: one prefill batch of the trace's prompt length (token ids are fixed
// and arbitrary: routing comes from the trace), then the trace's decode
// tokens one by one (fixed-seed token ids). Statistics are reset after the
// prefill, so they cover decode only.
//
// Thread-safety: reentrant for distinct models' contexts (each call makes its own).
#pragma once

#include <cstdint>
#include <string>

#include "core/model/model.h"
#include "sched/eviction_policy.h"
#include "sched/prefetch_gate.h"
#include "trace/simulated_lookahead.h"
#include "trace/route_trace.h"
#include "util/status.h"

namespace les::trace {

// One end-to-end replay's settings. Units: bytes, tokens, threads.
struct E2eOptions {
  size_t budget_bytes = 0;   // 0 = resident (experts in the file's memory map)
  sched::EvictionPolicy policy = sched::kDefaultEvictionPolicy;
  int32_t prefetch_c = -1;   // -1 = LES's default rule k + 2 with k = the trace's top-k (the top-k
                             // computed), clamped to the model's [k, 2k]; 0 = on-demand reads
  double recall = 0.886;     // the simulated predictor's recall, 0..1 (with lookahead)
  // How the simulated predictor's wrong candidates are drawn: by their layer's
  // popularity in the trace's prompt (near misses of a real predictor are often
  // popular experts), or uniformly (the pessimistic variant).
  FillerDraw fillers = FillerDraw::prompt_popularity;
  double prefetch_gate = sched::kDefaultPrefetchGate;  // StreamingParams::prefetch_gate
  int32_t n_threads = 2;
  int32_t decode_tokens = 0; // 0 = every decode token of the trace
  uint64_t seed = 1;
  bool direct_io = true;
};

// What one replay measured (decode tokens only unless named prefill).
struct E2eResult {
  int32_t prompt_tokens = 0, decode_tokens = 0;
  int32_t prefetch_c = 0;           // c in effect (0 = on-demand)
  double prefill_seconds = 0, decode_seconds = 0;
  double decode_tok_per_s() const noexcept { return decode_seconds > 0 ? decode_tokens / decode_seconds : 0; }
  // Decode only (streamed runs; 0 when resident):
  uint64_t bytes_read = 0;          // from the file, including O_DIRECT padding
  uint64_t prefetch_experts = 0, demand_experts = 0;
  uint64_t hits = 0, inflight_hits = 0, misses = 0;  // per selected expert: in the cache, being read, not asked for
  uint64_t prefetch_unused_bytes = 0;  // prefetched and evicted before any use
  uint64_t prefetch_gated = 0;      // uncached candidates the prefetch gate held back
  double hit_rate = 0;              // (hits + in-flight hits) / selected experts
  double io_wait_seconds = 0;       // compute blocked on expert reads
  double mean_recall = 0;           // the (simulated) predictor's measured recall
  // The process's resources over the decode tokens (getrusage; every thread):
  // CPU seconds in user and kernel mode, and page faults that read from disk
  // (a mapped page of the dense weights evicted under memory pressure and read
  // again counts here, and its time in compute).
  double user_cpu_seconds = 0, sys_cpu_seconds = 0;
  uint64_t major_faults = 0;
  // Whether the cores were the replay's own (a timing taken while other
  // processes ran is slower without any cause in LES): the seconds this
  // process's threads were runnable but waiting for a core (summed over its
  // threads, /proc/self/task/*/schedstat; 0 without schedstat), the times the
  // kernel preempted them (getrusage ru_nivcsw), and the CPU seconds every
  // other process and the kernel's own threads used meanwhile (/proc/stat
  // non-idle time of all cores minus this process's user + sys; includes
  // kernel work done for this process in kworkers and interrupts, e.g. I/O
  // completion, and time the hypervisor gave to other guests: steal).
  double run_queue_wait_seconds = 0, other_cpu_seconds = 0;
  uint64_t involuntary_switches = 0;
};

// Whether `trace` can drive `model` (same n_layer and n_expert, the trace's
// top-k at most the model's, prompt and decode tokens present), without
// making a context: callers check before costly setup. Errors:
// invalid_argument naming both shapes, or what the trace lacks.
Status check_trace_shape(const Model& model, const RouteTrace& trace);

// Errors: invalid_argument (trace and model shapes differ; options out of
// range); those of create_context and of the forward pass.
Result<E2eResult> replay_end_to_end(const Model& model, const RouteTrace& trace, const E2eOptions& o);

}  // namespace les::trace
