// Draft model drafting; see draft_model.h.
#include "core/speculative/draft_model.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace les {
namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

std::span<const int32_t> text_after_embeddings(std::span<const int32_t> history) noexcept {
  size_t start = history.size();
  while (start > 0 && history[start - 1] >= 0) --start;
  return history.subspan(start);
}

Status check_same_vocab(const Vocab& target, const Vocab& draft) {
  if (target.n_tokens() != draft.n_tokens())
    return invalid_argument_error("draft model: its vocabulary has " + std::to_string(draft.n_tokens()) +
                                  " tokens, the target's " + std::to_string(target.n_tokens()));
  for (int32_t id = 0; id < target.n_tokens(); ++id) {
    if (target.text(id) != draft.text(id))
      return invalid_argument_error("draft model: token " + std::to_string(id) + " is " + quoted(draft.text(id)) +
                                    " in the draft vocabulary but " + quoted(target.text(id)) + " in the target's");
    if (target.type(id) != draft.type(id))
      return invalid_argument_error("draft model: token " + std::to_string(id) + " (" + quoted(target.text(id)) +
                                    ") has type " + std::to_string(static_cast<int>(draft.type(id))) +
                                    " in the draft vocabulary but " +
                                    std::to_string(static_cast<int>(target.type(id))) + " in the target's");
  }
  if (target.bos() != draft.bos() || target.eos() != draft.eos())
    return invalid_argument_error("draft model: BOS/EOS ids " + std::to_string(draft.bos()) + "/" +
                                  std::to_string(draft.eos()) + " differ from the target's " +
                                  std::to_string(target.bos()) + "/" + std::to_string(target.eos()));
  return Status();
}

Result<std::unique_ptr<DraftModelDrafter>> DraftModelDrafter::create(const Vocab& target_vocab, const Model& draft,
                                                                     const DraftModelParams& p) {
  LES_ASSIGN_OR_RETURN(Vocab dv, Vocab::from_gguf(draft.file()));
  LES_RETURN_IF_ERROR(check_same_vocab(target_vocab, dv));
  if (draft.hparams().n_vocab != target_vocab.n_tokens())
    return invalid_argument_error("draft model: its output has " + std::to_string(draft.hparams().n_vocab) +
                                  " logits for a vocabulary of " + std::to_string(target_vocab.n_tokens()));
  SamplerParams sp = p.sampling;
  sp.penalty_last_n = 0;  // drafts draw without penalties (the verifier applies the target's)
  LES_ASSIGN_OR_RETURN(Sampler s, Sampler::create(sp));
  ContextParams cp;
  cp.n_ctx = p.n_ctx;
  cp.n_threads = p.n_threads;
  LES_ASSIGN_OR_RETURN(std::unique_ptr<Context> ctx, Context::create(draft, cp));
  return std::unique_ptr<DraftModelDrafter>(new DraftModelDrafter(std::move(ctx), std::move(s)));
}

Result<size_t> DraftModelDrafter::sync(std::span<const int32_t> tokens, size_t keep_max) {
  size_t keep = 0;
  const size_t lim = std::min({held_.size(), tokens.size(), keep_max});
  while (keep < lim && held_[keep] == tokens[keep]) ++keep;
  if (!ctx_->trim(static_cast<int32_t>(keep)).ok()) {
    // A recurrent (linear-attention) draft state goes back only to its
    // checkpoint (set before drafting, below); out of its reach it starts over.
    ctx_->reset();
    keep = 0;
  }
  held_.resize(keep);
  const auto rest = tokens.subspan(keep);
  if (rest.empty()) return size_t{0};
  Status st = ctx_->decode(rest);
  if (!st.ok()) return st.with_context("draft model");
  held_.insert(held_.end(), rest.begin(), rest.end());
  return rest.size();
}

void DraftModelDrafter::record_sync(size_t n, double seconds) {
  const double per_sync = seconds / static_cast<double>(n);
  sec_per_sync_ = sec_per_sync_ > 0 ? 0.8 * sec_per_sync_ + 0.2 * per_sync : per_sync;
}

Status DraftModelDrafter::prefill(const Context& target, std::span<const int32_t> sequence_in) {
  (void)target;
  const std::span<const int32_t> sequence = text_after_embeddings(sequence_in);
  if (sequence.empty()) return Status();
  const auto t0 = std::chrono::steady_clock::now();
  LES_ASSIGN_OR_RETURN(size_t n, sync(sequence, sequence.size()));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  counters_.prefill_tokens += static_cast<int64_t>(n);
  counters_.prefill_seconds += s;
  if (n > 1) record_sync(n, s);  // a batched prefill costs per token what a catch-up does
  return Status();
}

Result<Draft> DraftModelDrafter::propose(const DraftRequest& r_in) {
  Draft d;
  if (r_in.history.empty()) return invalid_argument_error("draft model: empty history");
  DraftRequest r = r_in;
  r.history = text_after_embeddings(r_in.history);
  if (r.history.empty()) return d;  // the last position is an image's: nothing to draft from
  if (r.max_tokens <= 0) return d;
  const auto t0 = std::chrono::steady_clock::now();
  // After a draft the context lacks its last token (never decoded): when the
  // target accepted it, decoding it now is part of drafting, not catch-up.
  size_t normal = 1;
  if (undecoded_ >= 0 && held_.size() + 1 < r.history.size() &&
      std::equal(held_.begin(), held_.end(), r.history.begin()) && r.history[held_.size()] == undecoded_)
    normal = 2;
  undecoded_ = -1;
  // Keep the common prefix (at least one token is decoded for fresh logits).
  LES_ASSIGN_OR_RETURN(const size_t n_synced, sync(r.history, r.history.size() - 1));
  const auto t1 = std::chrono::steady_clock::now();
  // Catch-up and drafting are measured apart: the catch-up grows with the
  // plain decoding since the last draft, the drafting with the draft length.
  // The one-token catch-up of a step that follows a draft (or the prefill)
  // is the normal cost of drafting (its first logits): it counts as drafting.
  if (n_synced > normal) {
    const double s = std::chrono::duration<double>(t1 - t0).count();
    record_sync(n_synced, s);
    counters_.catch_up_tokens += static_cast<int64_t>(n_synced);
    counters_.catch_up_seconds += s;
  }
  // The drafts decoded below are dropped again where the target rejects
  // them: a recurrent state needs a checkpoint to return to this position.
  if (ctx_->sequence().has_recurrent()) (void)ctx_->checkpoint(r.max_tokens);
  Status st;
  const auto t_draft = n_synced > normal ? t1 : t0;
  const bool greedy = sampler_.params().temperature <= 0.0f;
  for (int32_t i = 0; i < r.max_tokens; ++i) {
    if (i > 0) {
      const int32_t one[1] = {d.tokens.back()};
      st = ctx_->decode(one);
      if (!st.ok()) {
        if (st.code() == StatusCode::context_full) break;  // as many as fit
        return st.with_context("draft model");
      }
      held_.push_back(one[0]);
    }
    LES_ASSIGN_OR_RETURN(TokenProbs q, sampler_.distribution(ctx_->logits()));
    const int32_t t = sampler_.draw(q);
    d.tokens.push_back(t);
    if (!greedy) d.q.push_back(std::move(q));
  }
  if (!d.tokens.empty()) undecoded_ = d.tokens.back();
  const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_draft).count() /
                     static_cast<double>(std::max<size_t>(1, d.tokens.size()));
  sec_per_token_ = sec_per_token_ > 0 ? 0.8 * sec_per_token_ + 0.2 * per : per;
  return d;
}

double DraftModelDrafter::catch_up_seconds(std::span<const int32_t> history_in) const {
  const std::span<const int32_t> history = text_after_embeddings(history_in);
  const size_t lim = std::min(held_.size(), history.size());
  size_t keep = 0;
  while (keep < lim && held_[keep] == history[keep]) ++keep;
  size_t unseen = history.size() - keep;
  // The accepted last draft of the previous step is part of drafting.
  if (keep == held_.size() && unseen > 1 && undecoded_ >= 0 && history[keep] == undecoded_) --unseen;
  // One unseen token is the normal start of a draft (counted in seconds_per_token).
  if (unseen <= 1) return 0.0;
  // Never measured yet: the first catch-up is the prompt's, paid once.
  return sec_per_sync_ * static_cast<double>(unseen);
}

}  // namespace les
