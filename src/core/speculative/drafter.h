// Drafters for speculative decoding: cheap proposers of the tokens that
// follow a sequence, which the target model then checks in one batched verify
// pass (speculative_decoder.h). One interface for every kind:
//   prompt lookup  (prompt_lookup.h): copies what followed the most recent
//                  earlier occurrence of the sequence's last n tokens;
//   draft model    (draft_model.h): a second, smaller GGUF with the same
//                  vocabulary, run resident on its own context;
//   draft head     a multi-token-prediction block stored in the target's own
//                  GGUF (MTP / "nextn"): an implementation reads the target
//                  context's final hidden state (DraftRequest::target) and
//                  plugs in here like the others (the qwen35moe issue).
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

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Short name for statistics ("lookup", "draft-model", ...). Static storage.
  virtual const char* name() const noexcept = 0;
  // Proposes up to r.max_tokens tokens to follow r.history. Errors: the
  // drafter's own (a draft model's decode); the caller then decodes plainly.
  virtual Result<Draft> propose(const DraftRequest& r) = 0;
  // After a verify pass: of the n_verified first tokens of the last draft the
  // target checked, the first n_accepted were accepted.
  virtual void on_verified(int32_t n_verified, int32_t n_accepted) {
    (void)n_verified;
    (void)n_accepted;
  }
  // Measured time per proposed token (seconds; 0 = free), which the
  // draft-length policy weighs against the verify pass it saves.
  virtual double seconds_per_token() const noexcept { return 0.0; }
  // Number of distinct Draft::bucket values (>= 1).
  virtual int32_t n_buckets() const noexcept { return 1; }
};

}  // namespace les
