// OptimalEvictor: Belady's offline-optimal rule (evict the entry whose next
// use is furthest in the future; never used again = infinitely far), as an
// Evictor plugged into the same ExpertCache the LES policies use, so the
// optimum of a trace replay has exactly the replay's accounting (byte
// budget, batch entries pinned). L. A. Belady, "A study of replacement
// algorithms for a virtual-storage computer", IBM Systems Journal 5(2), 1966.
// (With entries of different sizes the rule is the classic heuristic, not a
// proven optimum; the traces' README uses the same rule.)
//
// Time is the index of the replayed group (one (token, layer) lookup batch);
// the replay must call on_use for each key exactly at the groups that use it,
// in order. Ties (equal next use) go to the larger key, as the README's
// reference replay does.
//
// Thread-safety: thread-compatible.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sched/eviction_policy.h"
#include "trace/route_trace.h"

namespace les::trace {

class OptimalEvictor final : public sched::Evictor {
 public:
  explicit OptimalEvictor(const RouteTrace& trace);
  void advance_tokens(int64_t n) noexcept override { (void)n; }
  void on_load(int32_t key) noexcept override { (void)key; }
  void on_use(int32_t key) noexcept override;
  void add(int32_t key) override { set_.insert({next_use(key), key}); }
  void remove(int32_t key) noexcept override { set_.erase({next_use(key), key}); }
  int32_t victim() override { return set_.empty() ? -1 : set_.rbegin()->second; }

 private:
  int64_t next_use(int32_t key) const noexcept;
  std::vector<std::vector<int64_t>> uses_;  // key -> groups that use it, ascending
  std::vector<size_t> cursor_;              // key -> index of its next use in uses_
  std::set<std::pair<int64_t, int32_t>> set_;
};

}  // namespace les::trace
