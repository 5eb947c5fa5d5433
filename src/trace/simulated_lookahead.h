// SimulatedLookahead: the lookahead predictor modelled from a recall figure,
// for trace replays where no hidden states exist to run the real one.
//
// For a layer whose true (router-selected) experts are `truth`, it names each
// true expert independently with probability `recall`, then fills the list up
// to `c` candidates with other experts of the layer drawn without
// replacement: uniformly, or (when the caller gives weights) with probability
// proportional to each expert's weight, e.g. its popularity in the layer so
// far (a real predictor's wrong candidates are near misses, the next layer's
// router on a slightly different input, so often popular experts). So the
// measured recall converges to `recall` and the precision to recall * k / c.
// Named true experts come first (router order), then the fillers: the list's
// ranks are informative, as a real predictor's are. Results that use it are
// labelled simulated.
//
// Thread-safety: thread-compatible (owns its random generator).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace les::trace {

// How a simulated predictor draws its wrong candidates (fillers).
enum class FillerDraw {
  uniform,            // any other expert of the layer, equally likely
  prompt_popularity,  // proportional to 1 + how many prompt tokens selected it in that layer
};

class SimulatedLookahead {
 public:
  // recall in [0, 1]; c >= 1 candidates; n_expert experts per layer; fixed seed.
  SimulatedLookahead(double recall, int32_t c, int32_t n_expert, uint64_t seed);
  // The candidates for a layer whose true experts are `truth` (distinct, in
  // [0, n_expert)): the named true ones first (router order), then fillers:
  // uniform when `weights` is empty, else drawn with probability proportional
  // to weights[e] (n_expert non-negative values; experts of weight 0 only once
  // every positive one is taken).
  void predict(std::span<const int32_t> truth, std::vector<int32_t>& out, std::span<const double> weights = {});
  double recall() const noexcept { return recall_; }
  int32_t c() const noexcept { return c_; }

 private:
  double recall_;
  int32_t c_, n_expert_;
  std::mt19937_64 rng_;
  std::vector<char> taken_;
};

}  // namespace les::trace
