#include "trace/cache_replay.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <set>
#include <vector>

#include "sched/expert_cache.h"
#include "trace/layer_lfu_evictor.h"
#include "trace/optimal_evictor.h"
#include "trace/simulated_lookahead.h"

namespace les::trace {

std::vector<ReplayPolicy> reference_replay_policies() { return {ReplayPolicy::layer_lfu(), ReplayPolicy()}; }

Result<ReplayPolicy> parse_replay_policy(const std::string& name) {
  if (name == "optimal") return ReplayPolicy();
  if (name == "layer_lfu") return ReplayPolicy::layer_lfu();
  auto p = sched::parse_eviction_policy(name);
  if (!p.ok())
    return invalid_argument_error("unknown policy '" + name + "' (known: adaptive, next_use, lfu_aged, lru, layer_lfu, optimal)");
  return ReplayPolicy(*p);
}

std::string replay_policy_name(const ReplayPolicy& p) {
  switch (p.kind) {
    case ReplayPolicy::Kind::les: return sched::eviction_policy_name(p.les);
    case ReplayPolicy::Kind::optimal: return "optimal";
    case ReplayPolicy::Kind::layer_lfu: return "layer_lfu";
  }
  return "?";
}

Result<ReplayResult> replay_cache(const RouteTrace& trace, const ReplayOptions& opt) {
  const int32_t k = trace.n_expert_used;
  const int32_t c = opt.candidates > 0 ? opt.candidates : std::min(k + 2, std::min(2 * k, trace.n_expert));
  if (opt.recall > 1) return invalid_argument_error("recall " + std::to_string(opt.recall) + " above 1");
  if (opt.recall >= 0 && (c < k || c > trace.n_expert))
    return invalid_argument_error("candidates " + std::to_string(c) + " outside [n_expert_used, n_expert]");
  if (opt.prefetch && opt.recall < 0) return invalid_argument_error("prefetch needs hints (a recall)");
  if (!(opt.prefetch_gate >= 0 && opt.prefetch_gate <= 1))
    return invalid_argument_error("prefetch gate " + std::to_string(opt.prefetch_gate) + " outside [0, 1]");
  std::unique_ptr<OptimalEvictor> optimal;
  sched::ExpertCacheParams cp;
  cp.n_layer = trace.n_layer;
  cp.n_expert = trace.n_expert;
  cp.slot_bytes = trace.max_expert_bytes();
  cp.alignment = 1;
  cp.min_slots = k;
  cp.n_expert_used = k;
  cp.budget_bytes = opt.budget_bytes;
  cp.backed = false;
  cp.entry_bytes = trace.expert_bytes;
  for (size_t& b : cp.entry_bytes)
    if (b == 0) b = cp.slot_bytes;  // a layer the trace never uses
  cp.next_use_half_life = opt.next_use_half_life;
  std::unique_ptr<LayerLfuEvictor> layer_lfu;
  switch (opt.policy.kind) {
    case ReplayPolicy::Kind::les: cp.policy = opt.policy.les; break;
    case ReplayPolicy::Kind::optimal:
      optimal = std::make_unique<OptimalEvictor>(trace);
      cp.custom_evictor = optimal.get();
      break;
    case ReplayPolicy::Kind::layer_lfu: {
      sched::EvictorParams ep;
      ep.n_layer = trace.n_layer;
      ep.n_expert = trace.n_expert;
      ep.n_expert_used = k;
      ep.entry_bytes = cp.entry_bytes;
      layer_lfu = std::make_unique<LayerLfuEvictor>(ep, opt.budget_bytes);
      cp.custom_evictor = layer_lfu.get();
      break;
    }
  }
  LES_ASSIGN_OR_RETURN(std::unique_ptr<sched::ExpertCache> cache, sched::ExpertCache::create(cp));

  std::unique_ptr<SimulatedLookahead> hints;
  if (opt.recall >= 0) hints = std::make_unique<SimulatedLookahead>(opt.recall, c, trace.n_expert, opt.seed);
  std::vector<int32_t> cand, missed;
  std::vector<sched::ExpertHandle> held;
  ReplayResult r;
  sched::PrefetchGate gate(c, opt.prefetch_gate);
  std::vector<std::pair<int32_t, int32_t>> watch;  // (expert, rank): uncached candidates of the next group
  int32_t unused_layer = -1;
  const auto count_unused = [&](bool decode) {
    if (decode && unused_layer >= 0) r.prefetch_unused_bytes += trace.expert_bytes[static_cast<size_t>(unused_layer)];
  };
  const auto t0 = std::chrono::steady_clock::now();
  const auto& G = trace.groups;
  for (size_t gi = 0; gi < G.size(); ++gi) {
    const RouteGroup& g = G[gi];
    const bool decode = g.phase == 1;
    const bool new_batch = gi == 0 || G[gi - 1].turn != g.turn || G[gi - 1].phase != g.phase ||
                           (decode && G[gi - 1].step != g.step);
    if (new_batch) {
      int64_t n = 1;
      if (!decode) {  // a prefill batch: its distinct token positions
        std::set<int32_t> steps;
        for (size_t j = gi; j < G.size() && G[j].turn == g.turn && G[j].phase == 0; ++j) steps.insert(G[j].step);
        n = static_cast<int64_t>(steps.size());
      }
      cache->advance_token(n);
      r.decode_tokens += decode ? 1 : 0;
    }
    cache->begin_layer(g.layer);
    // The gate learns whether each uncached candidate named for this group was selected.
    for (const auto& [e, rank] : watch)
      gate.observe(rank, std::find(g.experts.begin(), g.experts.end(), e) != g.experts.end());
    watch.clear();
    const bool hinted = hints && gi + 1 < G.size() && G[gi + 1].phase == 1;
    if (hinted) {
      hints->predict(G[gi + 1].experts, cand);
      cache->hint(G[gi + 1].layer, cand);
    }
    missed.clear();
    for (int32_t e : g.experts) {
      const int32_t slot = cache->lookup(g.layer, e);
      if (slot >= 0) {
        r.prefetch_hits += decode && cache->was_prefetched_unused(slot) ? 1 : 0;  // before pin() clears it
        held.push_back(cache->pin(slot));
        r.hits += decode ? 1 : 0;
      } else {
        missed.push_back(e);
      }
    }
    for (int32_t e : missed) {
      auto slot = cache->claim(g.layer, e, false, &unused_layer);
      count_unused(decode);
      if (!slot)
        return internal_error("replay: no entry for expert " + std::to_string(e) + " of layer " +
                              std::to_string(g.layer) + " (group " + std::to_string(gi) + ")");
      cache->fill_done(*slot, true);
      held.push_back(cache->pin(*slot));
      r.bytes_read += decode ? trace.expert_bytes[static_cast<size_t>(g.layer)] : 0;
    }
    r.lookups += decode ? g.experts.size() : 0;
    if (hinted && opt.prefetch) {
      // The engine's lookahead reads, issued while this group's entries are pinned.
      const RouteGroup& next = G[gi + 1];
      const size_t eb = trace.expert_bytes[static_cast<size_t>(next.layer)];
      for (size_t i = 0; i < cand.size(); ++i) {
        const int32_t e = cand[i], rank = static_cast<int32_t>(i);
        if (cache->lookup(next.layer, e) >= 0) continue;
        watch.emplace_back(e, rank);
        if (!gate.admits(rank)) continue;
        auto slot = cache->claim(next.layer, e, true, &unused_layer);
        count_unused(true);
        if (!slot) break;  // nothing evictable but protected or pinned entries: the engine stops too
        cache->fill_done(*slot, true);
        r.prefetch_bytes += eb;
        r.bytes_read += eb;
      }
    }
    held.clear();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace les::trace
