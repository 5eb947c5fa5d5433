// MtpDrafter: the MTP head of a qwen35moe file (core/model/mtp_head.h) as a
// speculative-decoding Drafter (drafter.h).
//
// The head follows the target position by position: accept(pos0, tokens,
// hidden) runs it over positions the target kept, with the target's final
// hidden rows (so its KV cache holds exactly llama.cpp's MTP context);
// draft(next, n) runs it on `next` (the target's token after the last
// accepted position) with the last accepted hidden row, takes the argmax
// (ties to the lowest id), and chains: each further draft feeds the previous
// draft with the head's own h_mtp in place of the target row. The head's
// entry for `next` is kept when accept() confirms it (bit-identical to
// recomputing it: the forward pass is batch-invariant); chained entries are
// dropped and recomputed with the target's rows.
//
// As a Drafter inside SpeculativeDecoder / generate: the target Context must
// keep its hidden rows (ContextParams::output_hidden). propose() first
// catches up with the target from the target's last decode (the prompt's
// prefill), then drafts after DraftRequest::history.back() greedily
// (deterministic: q = 1, so sampling stays exact through rejection sampling);
// on_verified() accepts each pass's kept rows; prefill() (generate's prefill
// phase) runs the head over the prompt at once. If the target moved where the
// head cannot follow (its hidden rows of missing positions are gone: a
// context reused without the drafter, output_hidden off), propose() returns
// invalid_argument naming the gap and the step decodes plainly; a target
// reset to position 0 and prefilled again is followed again.
//
// The head's routed experts come from `experts` (resident, or the target's
// streaming source: layer index n_layer, so they share its cache and budget).
//
// Thread-safety: thread-compatible. The model, the expert source and (for the
// borrowing constructor) the head must outlive the drafter.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/model/mtp_head.h"
#include "core/speculative/drafter.h"

namespace les {

class MtpDrafter final : public Drafter {
 public:
  // Borrows `head` (tests drive accept()/draft() directly).
  MtpDrafter(MtpHead& head, ExpertSource& experts);
  // Owns a head of `target`'s model, its experts from target.expert_source().
  // Errors: unsupported (the model has no MTP block), invalid_argument
  // (target made without ContextParams::output_hidden), as MtpHead::create.
  // The head's n_ctx defaults to the target's. `target` must outlive the drafter.
  static Result<std::unique_ptr<MtpDrafter>> create(const Context& target, MtpHeadParams p = {});

  // The target kept `tokens` at positions pos0 .. with final hidden rows
  // `hidden` (tokens.size() x n_embd, after output_norm). pos0 must equal
  // n_accepted(). Errors: invalid_argument (a gap or overlap in positions,
  // sizes), the head's decode errors; the drafter is then reset.
  Status accept(int32_t pos0, std::span<const int32_t> tokens, std::span<const float> hidden);
  // Up to n_draft greedy tokens that follow `next`. Errors: invalid_argument
  // (n_draft < 1, next out of range), context_full (no room for `next`).
  Result<std::vector<int32_t>> draft(int32_t next, int32_t n_draft);
  void reset() noexcept;
  // Positions accepted so far (the head's entries computed from target rows).
  int32_t n_accepted() const noexcept { return accepted_; }

  // Drafter.
  const char* name() const noexcept override { return "mtp"; }
  Result<Draft> propose(const DraftRequest& r) override;
  void on_verified(const VerifiedPass& v) override;
  // Runs the head over the prompt's positions from the target's prefill
  // (its hidden rows), so the first propose() drafts at once. Errors: as
  // propose()'s catch-up (the target's rows of a position are gone).
  Status prefill(const Context& target, std::span<const int32_t> sequence) override;
  double seconds_per_token() const noexcept override { return sec_per_token_; }

 private:
  MtpDrafter(std::unique_ptr<MtpHead> head, ExpertSource& experts);
  // Steps the head back to position `pos` (1 <= pos <= n_accepted()) when
  // the target rows it needs (of pos - 1) are among the last accepted pass's;
  // false (nothing changed) otherwise.
  bool rewind(int32_t pos);
  // Brings the head to the target's n_past() from the target's last decode's
  // hidden rows; `known` ends with the token at position target.n_past() - 1.
  Status catch_up(const Context& target, std::span<const int32_t> known);

  std::unique_ptr<MtpHead> owned_;
  MtpHead& head_;
  ExpertSource& experts_;
  std::vector<float> h_last_;  // the target's hidden row of position accepted_ - 1 (zeros at 0)
  std::vector<float> recent_;  // target rows of positions recent_pos0_ .. accepted_ - 1 (the last accept())
  std::vector<int32_t> recent_tokens_;  // the tokens of positions recent_pos0_ + 1 .. accepted_ - 1
  int32_t recent_pos0_ = 0;
  int32_t accepted_ = 0;
  int32_t drafted_token_ = -1;  // `next` of the last draft(), whose entry sits at accepted_
  double sec_per_token_ = 0;    // moving average of draft() time per token
};

}  // namespace les
