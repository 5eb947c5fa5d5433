// Speculative decoding step; see speculative_decoder.h.
#include "core/speculative/speculative_decoder.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "core/speculative/speculative_sampling.h"

namespace les {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

DraftLengthParams policy_params(const SpeculativeParams& p, const Drafter& d) {
  DraftLengthParams dp;
  dp.draft_max = p.draft_max;
  dp.draft_min = p.draft_min;
  dp.n_buckets = d.n_buckets();
  return dp;
}

}  // namespace

SpeculativeDecoder::SpeculativeDecoder(std::unique_ptr<Drafter> d, const SpeculativeParams& p)
    : drafter_(std::move(d)), p_(p), policy_(policy_params(p, *drafter_)) {}

Result<std::unique_ptr<SpeculativeDecoder>> SpeculativeDecoder::create(std::unique_ptr<Drafter> drafter,
                                                                        const SpeculativeParams& p) {
  if (!drafter) return invalid_argument_error("speculative decoding: no drafter");
  if (p.draft_max < 1 || p.draft_max > kMaxDraftTokens)
    return invalid_argument_error("speculative decoding: draft_max " + std::to_string(p.draft_max) + " outside 1.." +
                                  std::to_string(kMaxDraftTokens));
  if (p.draft_min < 0 || p.draft_min > p.draft_max)
    return invalid_argument_error("speculative decoding: draft_min " + std::to_string(p.draft_min) +
                                  " outside 0..draft_max (" + std::to_string(p.draft_max) + ")");
  return std::unique_ptr<SpeculativeDecoder>(new SpeculativeDecoder(std::move(drafter), p));
}

void SpeculativeDecoder::prefill(const Context& target, std::span<const int32_t> sequence) {
  prefill_status_ = drafter_->prefill(target, sequence);
}

Result<std::vector<int32_t>> SpeculativeDecoder::step(Context& ctx, Sampler& sampler,
                                                      std::span<const int32_t> history, int32_t max_new) {
  if (history.empty()) return invalid_argument_error("speculative step: empty history");
  if (max_new < 1) return invalid_argument_error("speculative step: max_new " + std::to_string(max_new) + " < 1");
  const int32_t n_past = ctx.n_past();
  const int32_t room = ctx.n_ctx() - n_past - 1;  // positions after the pending token's
  if (room < 0) return context_full_error("speculative step: no position left for the pending token");
  const int32_t cap = std::min({p_.draft_max, room, max_new - 1});
  ExpertSource& experts = ctx.expert_source();

  // Draft.
  VerifyPassStats ps;
  Draft draft;
  const auto t_draft = Clock::now();
  if (cap > 0) {
    const int32_t want =
        std::min(cap, policy_.plan(0, drafter_->seconds_per_token(), drafter_->catch_up_seconds(history)));
    if (want > 0) {
      DraftRequest r;
      r.history = history;
      r.max_tokens = want;
      r.target = &ctx;
      Result<Draft> d = drafter_->propose(r);
      if (d.ok()) draft = std::move(d).value();  // a failing drafter costs this step's speculation only
      if (draft.tokens.size() > static_cast<size_t>(want)) draft.tokens.resize(static_cast<size_t>(want));
      // Never verify an id the target cannot decode (a drafter must not
      // propose one; an image position's -1 would fail the whole pass).
      const int32_t n_vocab_target = ctx.model().hparams().n_vocab;
      for (size_t i = 0; i < draft.tokens.size(); ++i)
        if (draft.tokens[i] < 0 || draft.tokens[i] >= n_vocab_target) {
          draft.tokens.resize(i);
          break;
        }
      if (!draft.q.empty()) draft.q.resize(draft.tokens.size());
    }
  }
  ps.draft_seconds = seconds_since(t_draft);
  ps.n_drafted = static_cast<int32_t>(draft.tokens.size());

  // How many to verify, from the bytes each prefix would read.
  batch_.assign(1, history.back());
  batch_.insert(batch_.end(), draft.tokens.begin(), draft.tokens.end());
  prefix_bytes_.assign(batch_.size(), 0);
  experts.predict_batch_bytes(batch_, prefix_bytes_);
  const int32_t d = policy_.choose(draft.bucket, prefix_bytes_);
  ps.n_verified = d;
  ps.predicted_bytes = prefix_bytes_[static_cast<size_t>(d)];

  // One batched pass over the pending token and d drafts.
  const std::span<const int32_t> rows_in(batch_.data(), static_cast<size_t>(d) + 1);
  // A recurrent (linear-attention) state cannot drop a suffix by itself: mark
  // it here with a journal of the pass's rows, so trim() can return to any of
  // them (the caller may also trim to a kept row after a stop). Replaces the
  // previous step's checkpoint. A plain pass (d = 0) drops an earlier step's
  // checkpoint instead: its journal may no longer reach n_past, and the
  // Context then marks the state itself so a failed pass still returns to n_past.
  if (ctx.sequence().has_recurrent()) {
    if (d > 0) LES_RETURN_IF_ERROR(ctx.checkpoint(d + 1));
    else ctx.drop_checkpoint();
  }
  if (d > 0) experts.begin_verify();
  const auto t_pass = Clock::now();
  LES_RETURN_IF_ERROR(ctx.decode(rows_in, /*all_logits=*/d > 0, /*rows_as_decode=*/true));
  ps.seconds = seconds_since(t_pass);
  const ExpertCost::BatchIo io = experts.last_batch_io();
  ps.bytes_read = io.bytes_read;
  ps.union_experts = ctx.last_expert_union().experts;
  ps.union_bytes = ctx.last_expert_union().bytes;
  policy_.record_pass(d + 1, ps.seconds, io.io_wait_s, io.bytes_read, ps.predicted_bytes);

  const int32_t n_vocab = ctx.model().hparams().n_vocab;
  Result<Verdict> v = verify_draft(sampler, d > 0 ? ctx.logits_all() : ctx.logits(), n_vocab, draft, d);
  if (!v.ok()) {
    if (d > 0) experts.on_verified(d + 1);
    return v.status();
  }
  ps.n_accepted = v->n_accepted;
  ps.n_emitted = static_cast<int32_t>(v->tokens.size());
  if (d > 0) {
    // Roll back past the rejected drafts: keep the pending token and the accepted ones.
    LES_RETURN_IF_ERROR(ctx.trim(n_past + 1 + v->n_accepted));
    experts.on_verified(1 + v->n_accepted);
    policy_.record_acceptance(draft.bucket, d, v->n_accepted);
  }
  VerifiedPass vp;
  vp.n_verified = d;
  vp.n_accepted = v->n_accepted;
  vp.pos0 = n_past;
  vp.kept = std::span<const int32_t>(batch_.data(), static_cast<size_t>(v->n_accepted) + 1);
  vp.target = &ctx;
  drafter_->on_verified(vp);
  stats_.add(ps);
  return std::move(v).value().tokens;
}

}  // namespace les
