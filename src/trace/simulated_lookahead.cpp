#include "trace/simulated_lookahead.h"

#include <algorithm>

namespace les::trace {

SimulatedLookahead::SimulatedLookahead(double recall, int32_t c, int32_t n_expert, uint64_t seed)
    : recall_(std::clamp(recall, 0.0, 1.0)), c_(std::max(c, 1)), n_expert_(std::max(n_expert, 1)), rng_(seed),
      taken_(static_cast<size_t>(n_expert_), 0) {}

void SimulatedLookahead::predict(std::span<const int32_t> truth, std::vector<int32_t>& out,
                                 std::span<const double> weights) {
  out.clear();
  std::bernoulli_distribution named(recall_);
  int32_t n_truth = 0;
  for (int32_t e : truth) {
    if (e < 0 || e >= n_expert_ || taken_[static_cast<size_t>(e)]) continue;
    taken_[static_cast<size_t>(e)] = 1;  // true experts are never fillers
    ++n_truth;
    if (static_cast<int32_t>(out.size()) < c_ && named(rng_)) out.push_back(e);
  }
  const int32_t others = n_expert_ - n_truth;
  int32_t need = std::min(c_ - static_cast<int32_t>(out.size()), others);
  if (static_cast<int32_t>(weights.size()) == n_expert_) {
    // Weighted draws without replacement: O(n_expert) per filler.
    for (; need > 0; --need) {
      double total = 0;
      for (int32_t e = 0; e < n_expert_; ++e)
        if (!taken_[static_cast<size_t>(e)]) total += std::max(weights[static_cast<size_t>(e)], 0.0);
      if (!(total > 0)) break;  // only weight-0 experts left: uniform below
      double u = std::uniform_real_distribution<double>(0.0, total)(rng_);
      int32_t pick = -1;
      for (int32_t e = 0; e < n_expert_; ++e) {
        if (taken_[static_cast<size_t>(e)]) continue;
        const double w = std::max(weights[static_cast<size_t>(e)], 0.0);
        if (w <= 0) continue;
        pick = e;  // the last positive one absorbs rounding
        if (u < w) break;
        u -= w;
      }
      taken_[static_cast<size_t>(pick)] = 1;
      out.push_back(pick);
    }
  }
  std::uniform_int_distribution<int32_t> pick(0, n_expert_ - 1);
  for (; need > 0;) {
    const int32_t e = pick(rng_);
    if (taken_[static_cast<size_t>(e)]) continue;
    taken_[static_cast<size_t>(e)] = 1;
    out.push_back(e);
    --need;
  }
  for (int32_t e : truth)
    if (e >= 0 && e < n_expert_) taken_[static_cast<size_t>(e)] = 0;
  for (int32_t e : out) taken_[static_cast<size_t>(e)] = 0;
}

}  // namespace les::trace
