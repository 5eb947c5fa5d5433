// Cache-only trace replay: drives LES's ExpertCache and eviction policy with
// a recorded routing trace and counts hits and the bytes a miss would read.
//
// Accounting (the traces' README, so LES's lru reproduces its LRU column):
// one lookup per distinct expert of each (token, layer) group, in file order;
// hits are pinned first, then each miss claims an entry (evicting by policy)
// and is pinned, so a group's own entries are never evicted; pins end with
// the group. Prefill groups warm the cache; hits and bytes count decode
// groups only. The budget is bytes of expert data: an entry of layer l takes
// the trace's expert_bytes of l (no memory is allocated). Time: the prefill
// of a turn is one batch of its token count, each decode token one batch;
// the cache is told which layer each group serves.
//
// Hints (recall >= 0): before a group's lookups, a SimulatedLookahead names
// candidates for the next group's layer (the lookahead predictor scores
// layer l + 1 from layer l's router input, available before layer l's reads
// are claimed) and the cache is given them (ExpertCache::hint). Without
// `prefetch` no reads are simulated for them: a hint only informs eviction,
// so hit rates stay comparable with the offline optimum. That is also why
// hints barely move a demand-only replay: they name experts of the very next
// layer, which next_use already ranks last for eviction (one layer step to
// their use), so sparing them changes almost no decision (bench/results/
// policy_table-2026-12-03-*.md: the same hit rates at r = 0.886 and 1.0).
//
// Prefetch (recall >= 0 and prefetch): the engine's use of the hints. After a
// group's lookups (its entries still pinned, as the engine issues the
// lookahead while the layer computes), every candidate not cached whose rank
// the engine's PrefetchGate admits is claimed as a prefetch (protected from
// eviction for that token and the next, as in the engine) and counted as
// read; the gate learns from each uncached candidate's outcome at the next
// group, as the scheduler's does. A lookup that finds an entry read ahead
// and not used yet is a hit and a prefetch hit: it did not wait for a read,
// but its bytes were read, so bytes_read (demand misses + prefetches) is
// the figure to hold against the optimum's, and the hit rate with prefetch
// is the engine's "cache + in flight" rate, not a demand-paging one.
//
// Thread-safety: reentrant (everything is per call).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/eviction_policy.h"
#include "sched/prefetch_gate.h"
#include "trace/route_trace.h"
#include "util/status.h"

namespace les::trace {

// What ranks the replay's evictions: one of LES's eviction policies, or a
// reference computed only here: the offline optimum (default-constructed) or
// the published per-layer policy (layer_lfu_evictor.h). A value.
struct ReplayPolicy {
  enum class Kind { les, optimal, layer_lfu };
  Kind kind = Kind::optimal;
  sched::EvictionPolicy les = sched::kDefaultEvictionPolicy;  // when kind == les
  ReplayPolicy() = default;
  ReplayPolicy(sched::EvictionPolicy p) : kind(Kind::les), les(p) {}  // NOLINT: a LES policy is a replay policy
  static ReplayPolicy layer_lfu() {
    ReplayPolicy r;
    r.kind = Kind::layer_lfu;
    return r;
  }
  bool operator==(const ReplayPolicy& o) const noexcept { return kind == o.kind && (kind != Kind::les || les == o.les); }
};
// The references every table shows next to LES's policies: layer_lfu, optimal.
std::vector<ReplayPolicy> reference_replay_policies();
// "optimal", "layer_lfu" or an eviction policy name. Errors: invalid_argument naming the choices.
Result<ReplayPolicy> parse_replay_policy(const std::string& name);
std::string replay_policy_name(const ReplayPolicy& p);

struct ReplayOptions {
  size_t budget_bytes = 0;     // bytes of expert data; at least n_expert_used x the largest expert
  ReplayPolicy policy = sched::kDefaultEvictionPolicy;
  double recall = -1;          // < 0: no hints; else the simulated predictor's recall
  int32_t candidates = 0;      // hint list length c; 0 = n_expert_used + 2 (the engine's default, <= 2k)
  uint64_t seed = 1;           // the simulated predictor's random stream
  double next_use_half_life = sched::kNextUseHalfLife;
  // With hints: read uncached candidates ahead through the engine's prefetch
  // gate (see the top of this file).
  bool prefetch = false;
  double prefetch_gate = sched::kDefaultPrefetchGate;  // the engine's threshold; 0 = read every candidate
};

struct ReplayResult {
  uint64_t lookups = 0;      // decode lookups
  uint64_t hits = 0;         // decode lookups found in the cache
  uint64_t bytes_read = 0;   // expert bytes read during decode: misses, plus prefetches with prefetch
  uint64_t prefetch_hits = 0;          // decode hits on an entry read ahead and not used before
  uint64_t prefetch_bytes = 0;         // decode bytes read ahead (part of bytes_read)
  uint64_t prefetch_unused_bytes = 0;  // decode bytes of prefetched entries evicted before any use
  uint64_t decode_tokens = 0;
  double seconds = 0;        // wall time of the replay loop (cache + policy bookkeeping)
  double hit_rate() const noexcept { return lookups == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(lookups); }
};

// Errors: invalid_argument (budget below one layer's k largest experts,
// recall above 1, candidates outside [n_expert_used, n_expert], prefetch
// without hints, prefetch gate outside [0, 1]); internal
// (the cache refused a claim it must grant).
Result<ReplayResult> replay_cache(const RouteTrace& trace, const ReplayOptions& opt);

}  // namespace les::trace
