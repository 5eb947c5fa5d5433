// AgedCount: a use count that halves every `half_life` tokens, stored so that
// comparing two counts needs no update as time passes.
//
// f(t) = sum over uses u of 2^-((t - t_u) / h). It is kept as
// g = log2(f(t0)) + t0 / h at the time t0 of the last use, so f(t) =
// 2^(g - t / h) and f_a(t) < f_b(t) exactly when g_a < g_b, at every t: an
// ordered set keyed by g stays ordered while the counts age (Lee et al.,
// "LRFU", IEEE ToC 2001, use the same combined recency-frequency value).
// An entry never used has g = -inf (f = 0).
//
// Thread-safety: a value.
#pragma once

#include <cmath>
#include <limits>

namespace les::sched {

struct AgedCount {
  double g = -std::numeric_limits<double>::infinity();

  // f at token time t (t >= the last use).
  double value(double t, double half_life) const noexcept {
    return std::isinf(g) ? 0.0 : std::exp2(g - t / half_life);
  }
  // One more use at token time t.
  void add_use(double t, double half_life) noexcept { g = std::log2(value(t, half_life) + 1.0) + t / half_life; }
};

}  // namespace les::sched
