// Drafters for speculative decoding: cheap proposers of the tokens that
// follow a sequence, which the target model then checks in one batched verify
// pass (speculative_decoder.h). One interface for every kind:
//   prompt lookup  (prompt_lookup.h): copies what followed the most recent
//                  earlier occurrence of the sequence's last n tokens;
//   draft model    (draft_model.h): a second, smaller GGUF with the same
//                  vocabulary, run resident on its own context;
//   draft head     a multi-token-prediction block stored in the target's own
//                  GGUF (MTP / "nextn"; mtp_drafter.h): reads the target
//                  context's final hidden rows (ContextParams::output_hidden)
//                  of the positions it kept (VerifiedPass).
// A drafter never changes the output: the verifier accepts a draft token only
// as the target's own sampling rule allows (speculative_sampling.h).
//
// Thread-safety: thread-compatible (one generation stream at a time).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/sampler.h"
#include "util/status.h"

namespace les {

class Context;

struct DraftRequest {
  // Every token of the sequence: the prompt, what was generated, and last the
  // token the verify pass evaluates first (delivered, not yet evaluated by the
  // target). Never empty.
  std::span<const int32_t> history;
  int32_t max_tokens = 0;  // propose at most this many (>= 0)
  // The target's context before the verify pass (a draft head reads its
  // hidden state); may be null (tests). Borrowed for the call.
  const Context* target = nullptr;
};

struct Draft {
  std::vector<int32_t> tokens;  // the proposed ids, in order (may be empty: nothing to propose)
  // Per token, the distribution it was drawn from (the verifier's q); empty
  // when the drafter is deterministic (q = 1 on the proposed token).
  std::vector<TokenProbs> q;
  // Which acceptance statistic of the draft-length policy this draft feeds
  // (< Drafter::n_buckets()): prompt lookup uses the matched n-gram length, so
  // weak matches learn their own (lower) acceptance.
  int32_t bucket = 0;
};

// What one target pass of a decode step kept (Drafter::on_verified).
struct VerifiedPass {
  int32_t n_verified = 0;  // drafts of the last propose() the pass checked (0: a plain one-token pass)
  int32_t n_accepted = 0;  // of those, the first n_accepted were accepted
  int32_t pos0 = 0;        // position of the pass's first row (the pending token)
  // The tokens the target now holds at pos0 ..: the pending token and the
  // accepted drafts (1 + n_accepted). Borrowed for the call.
  std::span<const int32_t> kept;
  // The target after the pass and its rollback: its hidden_all() rows (with
  // ContextParams::output_hidden) are positions pos0 .. of the pass. Borrowed
  // for the call; never null from SpeculativeDecoder.
  const Context* target = nullptr;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Short name for statistics ("lookup", "draft-model", ...). Static storage.
  virtual const char* name() const noexcept = 0;
  // Proposes up to r.max_tokens tokens to follow r.history. Errors: the
  // drafter's own (a draft model's decode); the caller then decodes plainly.
  virtual Result<Draft> propose(const DraftRequest& r) = 0;
  // After every target pass of a decode step (verify pass or plain pass):
  // what the target kept. A drafter that follows the target's state (a draft
  // head) updates itself here; it never fails (a drafter that cannot follow
  // proposes nothing afterwards, or recovers in propose()).
  virtual void on_verified(const VerifiedPass& v) { (void)v; }
  // The target just prefilled: `sequence` is every token it now holds
  // (positions 0 .. sequence.size() - 1), `target` the context after the
  // prefill. A drafter with its own state of the text (a draft model's
  // context, a draft head's KV cache) processes it here, so the prefill
  // phase pays for it and the first draft needs no catch-up. Errors: the
  // drafter's own; it then catches up in propose() as before (never fatal
  // to generation: SpeculativeDecoder::prefill).
  virtual Status prefill(const Context& target, std::span<const int32_t> sequence) {
    (void)target;
    (void)sequence;
    return Status();
  }
  // Measured time per proposed token (seconds; 0 = free), which the
  // draft-length policy weighs against the verify pass it saves.
  virtual double seconds_per_token() const noexcept { return 0.0; }
  // Measured seconds the drafter needs before it can draft after `history`
  // (a draft model decoding the tokens its own context has not seen yet:
  // after a stretch of plain decoding, all of them); 0 = none. The policy
  // adds it to any pass that drafts, and spends at most a small share of
  // the decode time on exploring probes that pay it.
  virtual double catch_up_seconds(std::span<const int32_t> history) const {
    (void)history;
    return 0.0;
  }
  // Number of distinct Draft::bucket values (>= 1).
  virtual int32_t n_buckets() const noexcept { return 1; }
};

}  // namespace les
