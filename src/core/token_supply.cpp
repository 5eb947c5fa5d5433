// The generation loop's token supplies; see token_supply.h.
#include "core/token_supply.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "core/speculative/speculative_decoder.h"

namespace les {

Result<TokenSupply::Next> PlainTokenSupply::next(Context& ctx, Sampler& sampler, int32_t i, double* sample_seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<int32_t> tok = sampler.sample(ctx.logits());
  *sample_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!tok.ok()) return tok.status().with_context("sampling token " + std::to_string(i));
  sampler.accept(*tok);
  return Next{*tok, false};
}

Status PlainTokenSupply::advance(Context& ctx, Sampler& sampler, int32_t token, int32_t i, int32_t left) {
  (void)sampler;
  (void)left;
  const int32_t one[1] = {token};
  Status s = ctx.decode(one);
  if (!s.ok()) return s.with_context("decode of generated token " + std::to_string(i));
  return Status();
}

void SpeculativeTokenSupply::prefill(Context& ctx) {
  seq_.assign(ctx.tokens().begin(), ctx.tokens().end());
  // A drafter with its own state (a draft model) reads the prompt now, in
  // the prefill phase, not on its first draft inside the decode phase.
  decoder_.prefill(ctx, seq_);
}

Result<TokenSupply::Next> SpeculativeTokenSupply::next(Context& ctx, Sampler& sampler, int32_t i,
                                                       double* sample_seconds) {
  Next n;
  last_evaluated_pos_ = -1;
  if (next_ready_ < ready_.size()) {  // sampled and accepted by the verifier already
    const int32_t j = static_cast<int32_t>(next_ready_++);
    n.token = ready_[static_cast<size_t>(j)];
    if (j < n_evaluated_) {
      n.evaluated = true;
      last_evaluated_pos_ = first_pos_ + j;
    }
  } else {
    LES_ASSIGN_OR_RETURN(n, sample_.next(ctx, sampler, i, sample_seconds));
  }
  seq_.push_back(n.token);
  return n;
}

Status SpeculativeTokenSupply::advance(Context& ctx, Sampler& sampler, int32_t token, int32_t i, int32_t left) {
  (void)token;  // seq_.back()
  first_pos_ = ctx.n_past() + 1;
  Result<std::vector<int32_t>> r = decoder_.step(ctx, sampler, seq_, left);
  if (!r.ok()) return r.status().with_context("speculative decode after generated token " + std::to_string(i));
  ready_ = std::move(r).value();
  next_ready_ = 0;
  n_evaluated_ = static_cast<int32_t>(ready_.size()) - 1;
  return Status();
}

Status SpeculativeTokenSupply::drop_undelivered(Context& ctx) {
  last_evaluated_pos_ = -1;  // the last handed-out token was delivered: it stays
  if (next_ready_ >= ready_.size()) return Status();
  // Accepted drafts not handed out yet leave the context (their positions go).
  const int32_t keep = first_pos_ + std::min(static_cast<int32_t>(next_ready_), n_evaluated_);
  next_ready_ = ready_.size();
  if (keep < ctx.n_past()) LES_RETURN_IF_ERROR(ctx.trim(keep));
  return Status();
}

Status SpeculativeTokenSupply::finish(Context& ctx) {
  // A stop at a token a verify pass evaluated: drop it and the accepted
  // drafts after it, so the sequence ends as plain decoding leaves it (the
  // last delivered token pending, a stopping EOS not in the context).
  if (last_evaluated_pos_ >= 0) LES_RETURN_IF_ERROR(ctx.trim(last_evaluated_pos_));
  // The last verify pass's checkpoint of a recurrent state is of no further
  // use: later decodes would journal into it for nothing.
  if (ctx.sequence().has_recurrent()) ctx.drop_checkpoint();
  return Status();
}

}  // namespace les
