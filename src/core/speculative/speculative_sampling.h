// Which drafted tokens the target accepts: speculative (rejection) sampling,
// Leviathan, Kalman & Matias 2023 ("Fast Inference from Transformers via
// Speculative Decoding", Algorithm 1) and Chen et al. 2023 ("Accelerating
// Large Language Model Decoding with Speculative Sampling", Theorem 1).
//
// The verify pass gives d + 1 rows of target logits: row i follows the
// pending token and drafts x_1..x_i. For i = 0, 1, ...:
//   p = target sampler's distribution of row i (the full chain: penalties
//       with the tokens accepted so far, top-k, top-p, min-p, temperature);
//   i == d (all drafts accepted): draw the bonus token y ~ p; stop.
//   q = the distribution x_{i+1} was drawn from (1 on x_{i+1} for a
//       deterministic drafter); accept x_{i+1} with probability
//       min(1, p(x)/q(x)) (no random draw when that is 0 or 1);
//   on rejection draw y from the residual max(0, p - q) / sum(max(0, p - q));
//       stop.
// Every returned token is distributed exactly as plain sampling from the
// target would give it (the theorem), so the output distribution does not
// depend on the drafter. At temperature 0, p is the argmax with probability
// 1: a draft token is accepted iff it is the target's greedy choice, and the
// token at the first mismatch is the greedy choice: output token for token
// identical to plain greedy decoding. Each returned token is accept()ed into
// the sampler's penalty window as it is chosen.
//
// Shapes: rows is (d + 1) x n_vocab floats, token-major.
// Thread-safety: thread-compatible (uses the sampler's RNG).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/sampler.h"
#include "core/speculative/drafter.h"
#include "util/status.h"

namespace les {

struct Verdict {
  std::vector<int32_t> tokens;  // accepted drafts, then the target's own token (n_accepted + 1 ids)
  int32_t n_accepted = 0;       // drafts accepted (0..d)
};

// Verifies the first d tokens of `draft` (d <= draft.tokens.size()) against
// `rows`. Errors: invalid_argument (rows not (d + 1) * n_vocab, draft.q of the
// wrong length, a draft id outside [0, n_vocab)), the sampler's (a NaN logit).
// On error the sampler may have accepted some tokens.
Result<Verdict> verify_draft(Sampler& target, std::span<const float> rows, int32_t n_vocab, const Draft& draft,
                             int32_t d);

}  // namespace les
