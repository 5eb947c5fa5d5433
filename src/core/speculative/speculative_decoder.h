// Speculative decoding over a Context: one decode step drafts tokens, checks
// them in one batched verify pass of the target, keeps the accepted prefix
// and rolls the sequence state back past the rest.
//
// step(ctx, sampler, history) with p = history.back() (the last delivered
// token, not yet evaluated) and n_past = ctx.n_past():
//   cap   = min(draft_max, n_ctx - n_past - 1, max_new - 1)   never past n_ctx:
//           the pass writes positions n_past .. n_past + d only
//   draft = drafter.propose(history, min(cap, policy.plan(...)))
//   bytes = ctx.expert_source().predict_batch_bytes([p, draft])  per prefix
//   d     = policy.choose(bytes)            0 = a plain one-token pass
//   ctx.checkpoint(d + 1)                   a recurrent state only (hybrid models):
//           journals the pass so trim() can return to any of its rows (kept
//           until the next step; a plain pass, d = 0, drops it)
//   ctx.decode([p, x_1..x_d], all_logits)   one batched pass, d + 1 rows; the
//           expert source loads the union of the rows' experts once per
//           layer (in waves when it exceeds the cache) and counts the pass as
//           one step of its recency/frequency bookkeeping
//   verdict = verify_draft(sampler, rows, draft, d)   (speculative_sampling.h)
//   ctx.trim(n_past + 1 + n_accepted)       rollback through the sequence state
//   ctx.expert_source().on_verified(1 + n_accepted)   rejected rows earn no use
//   drafter.on_verified({d, n_accepted, n_past, kept tokens, &ctx})   every pass
// and returns verdict.tokens: the accepted drafts (evaluated: n_past counts
// them) followed by the target's own token (not evaluated; the next step's
// pending token). Output equals plain decoding token for token at temperature
// 0 (batch invariance: a row's logits do not depend on the batch), and in
// distribution otherwise.
//
// Thread-safety: thread-compatible (one generation stream at a time).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/model/context.h"
#include "core/sampler.h"
#include "core/speculative/draft_length.h"
#include "core/speculative/drafter.h"
#include "core/speculative/speculative_stats.h"
#include "util/status.h"

namespace les {

// The most drafts one verify pass may check (les_generate_params.draft_max's bound).
inline constexpr int32_t kMaxDraftTokens = 64;

struct SpeculativeParams {
  int32_t draft_max = 8;  // most drafts per verify pass (1..kMaxDraftTokens)
  int32_t draft_min = 0;  // fewest verified when available (0..draft_max; 0 = the policy may decode plainly)
};

class SpeculativeDecoder {
 public:
  // Errors: invalid_argument (null drafter, draft_max outside 1..kMaxDraftTokens,
  // draft_min outside 0..draft_max).
  static Result<std::unique_ptr<SpeculativeDecoder>> create(std::unique_ptr<Drafter> drafter,
                                                            const SpeculativeParams& p);

  // One decode step (above). `history` = the whole sequence, its last token
  // the pending one; max_new >= 1 caps the tokens returned (what n_predict
  // leaves). Errors: context_full (no position left for the pending token),
  // invalid_argument (empty history, max_new < 1), the target's decode errors
  // (the sequence state is then unchanged) and the sampler's. A failing
  // drafter is not an error: the step decodes plainly.
  Result<std::vector<int32_t>> step(Context& ctx, Sampler& sampler, std::span<const int32_t> history,
                                    int32_t max_new);

  // After the target's prefill (generate calls it inside the prefill
  // phase): the drafter processes `sequence` = every token the target holds
  // (Drafter::prefill). A drafter's error is not an error of generation: it
  // is kept in last_prefill_status() and the drafter catches up in its first
  // propose() instead.
  void prefill(const Context& target, std::span<const int32_t> sequence);
  // What the drafter's last prefill() returned (OK before any).
  const Status& last_prefill_status() const noexcept { return prefill_status_; }

  const SpeculativeStats& stats() const noexcept { return stats_; }
  void reset_stats() { stats_.clear(); }
  const Drafter& drafter() const noexcept { return *drafter_; }
  const DraftLengthPolicy& policy() const noexcept { return policy_; }
  const SpeculativeParams& params() const noexcept { return p_; }

 private:
  SpeculativeDecoder(std::unique_ptr<Drafter> d, const SpeculativeParams& p);

  std::unique_ptr<Drafter> drafter_;
  SpeculativeParams p_;
  DraftLengthPolicy policy_;
  SpeculativeStats stats_;
  std::vector<int32_t> batch_;
  std::vector<uint64_t> prefix_bytes_;
  Status prefill_status_;
};

}  // namespace les
