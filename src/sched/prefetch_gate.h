// PrefetchGate: which of the lookahead predictor's candidates are worth
// reading ahead, learned from the scheduler's own outcomes.
//
// The predictor names c candidates per token, best first (rank 0 .. c-1).
// A candidate already in the cache costs nothing; one that is not costs a
// read of one expert, which pays only if the next layer then selects it. A
// wasted read costs about what a used one saves (one expert's bytes through
// the disk, and on a small machine the CPU that drives them; the used one
// would have been read on demand anyway, so prefetching it saves only its
// latency). So a candidate is worth reading ahead when it is more likely used
// than not: the gate admits rank j while the measured fraction of the
// uncached candidates of rank j that the next layer selected is at least the
// threshold (kDefaultPrefetchGate = 1/2).
//
// The fraction is measured for every uncached candidate, admitted or not (a
// held-back candidate's outcome is still known when its layer routes), so a
// rank that was shut off comes back when its candidates start being used. It
// is an exponential moving average over the last ~kPrefetchGateWindow
// outcomes of that rank, starting at 1 (prefetch everything until measured).
// Ranks are the predictor's, not a model's or a trace's: one rule for every
// top-k. Which candidates count as uncached is the scheduler's business.
//
// Thread-safety: thread-compatible (the scheduler holds its mutex).
#pragma once

#include <cstdint>
#include <vector>

namespace les::sched {

// The default threshold: prefetch a rank while at least half its uncached
// candidates are used (see above).
inline constexpr double kDefaultPrefetchGate = 0.5;
// Outcomes the moving average of one rank spans (its weight per outcome is 1/window).
inline constexpr double kPrefetchGateWindow = 64.0;

class PrefetchGate {
 public:
  // c: candidates per token (ranks 0 .. c-1; others are never admitted);
  // threshold: in [0, 1]; 0 admits every rank (no gate).
  PrefetchGate(int32_t c, double threshold);

  // Whether a candidate of `rank` that is not cached should be read ahead.
  bool admits(int32_t rank) const noexcept;
  // Records whether an uncached candidate of `rank` was selected by its layer.
  // Out-of-range ranks are ignored.
  void observe(int32_t rank, bool used) noexcept;
  // The measured fraction used of `rank` (0 for an out-of-range rank).
  double used_fraction(int32_t rank) const noexcept;
  double threshold() const noexcept { return threshold_; }

 private:
  double threshold_;
  std::vector<double> used_;  // per rank
};

}  // namespace les::sched
