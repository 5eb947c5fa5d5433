// Speculative rejection sampling; see speculative_sampling.h.
#include "core/speculative/speculative_sampling.h"

#include <string>

namespace les {
namespace {

// max(0, p - q) over p's support, renormalised; empty when it has no mass.
TokenProbs residual(const TokenProbs& p, const TokenProbs* q, int32_t drafted) {
  TokenProbs r;
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const float qi = q ? q->prob(p.ids[i]) : (p.ids[i] == drafted ? 1.0f : 0.0f);
    const float v = p.p[i] - qi;
    if (v > 0) {
      r.ids.push_back(p.ids[i]);
      r.p.push_back(v);
      sum += v;
    }
  }
  if (!(sum > 0)) return {};
  for (float& v : r.p) v = static_cast<float>(v / sum);
  return r;
}

}  // namespace

Result<Verdict> verify_draft(Sampler& target, std::span<const float> rows, int32_t n_vocab, const Draft& draft,
                             int32_t d) {
  if (d < 0 || static_cast<size_t>(d) > draft.tokens.size())
    return invalid_argument_error("verify: " + std::to_string(d) + " drafts to verify, but the draft has " +
                                  std::to_string(draft.tokens.size()));
  if (n_vocab <= 0 || rows.size() != static_cast<size_t>(d + 1) * static_cast<size_t>(n_vocab))
    return invalid_argument_error("verify: " + std::to_string(rows.size()) + " logits for " + std::to_string(d + 1) +
                                  " rows of " + std::to_string(n_vocab));
  if (!draft.q.empty() && draft.q.size() != draft.tokens.size())
    return invalid_argument_error("verify: the draft has " + std::to_string(draft.tokens.size()) + " tokens but " +
                                  std::to_string(draft.q.size()) + " distributions");
  Verdict v;
  for (int32_t i = 0; i <= d; ++i) {
    const std::span<const float> row = rows.subspan(static_cast<size_t>(i) * n_vocab, static_cast<size_t>(n_vocab));
    LES_ASSIGN_OR_RETURN(TokenProbs p, target.distribution(row));
    if (i == d) {  // every draft accepted: the bonus token
      const int32_t y = target.draw(p);
      target.accept(y);
      v.tokens.push_back(y);
      return v;
    }
    const int32_t x = draft.tokens[static_cast<size_t>(i)];
    if (x < 0 || x >= n_vocab)
      return invalid_argument_error("verify: draft token " + std::to_string(i) + " has id " + std::to_string(x) +
                                    ", outside [0, " + std::to_string(n_vocab) + ")");
    const TokenProbs* q = draft.q.empty() ? nullptr : &draft.q[static_cast<size_t>(i)];
    const double px = p.prob(x);
    const double qx = q ? q->prob(x) : 1.0;
    // Accept with probability min(1, p(x) / q(x)); a draft the drafter could
    // not have drawn (q(x) = 0) is treated as deterministic.
    const double ratio = qx > 0 ? px / qx : px;
    const bool accept = ratio >= 1.0 || (ratio > 0.0 && target.uniform() < ratio);
    if (accept) {
      target.accept(x);
      v.tokens.push_back(x);
      ++v.n_accepted;
      continue;
    }
    TokenProbs r = residual(p, q && qx > 0 ? q : nullptr, x);
    const int32_t y = target.draw(r.size() > 0 ? r : p);
    target.accept(y);
    v.tokens.push_back(y);
    return v;
  }
  return v;  // not reached: the loop returns at i == d
}

}  // namespace les
