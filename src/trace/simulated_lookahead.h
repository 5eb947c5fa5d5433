// SimulatedLookahead: the lookahead predictor modelled from a recall figure,
// for trace replays where no hidden states exist to run the real one.
//
// For a layer whose true (router-selected) experts are `truth`, it names each
// true expert independently with probability `recall`, then fills the list up
// to `c` candidates with other experts of the layer drawn uniformly without
// replacement. So the measured recall converges to `recall` and the precision
// to recall * k / c. This models only how many true experts a predictor
// finds, not which wrong ones it names (a real predictor's wrong candidates
// are near misses, often popular experts); results that use it are labelled
// simulated.
//
// Thread-safety: thread-compatible (owns its random generator).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace les::trace {

class SimulatedLookahead {
 public:
  // recall in [0, 1]; c >= 1 candidates; n_expert experts per layer; fixed seed.
  SimulatedLookahead(double recall, int32_t c, int32_t n_expert, uint64_t seed);
  // The candidates for a layer whose true experts are `truth` (distinct, in
  // [0, n_expert)): the named true ones first (router order), then fillers.
  void predict(std::span<const int32_t> truth, std::vector<int32_t>& out);
  double recall() const noexcept { return recall_; }
  int32_t c() const noexcept { return c_; }

 private:
  double recall_;
  int32_t c_, n_expert_;
  std::mt19937_64 rng_;
  std::vector<char> taken_;
};

}  // namespace les::trace
