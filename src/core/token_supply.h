// TokenSupply: where the generation loop (generate.h) gets each token, and
// how it moves past one. Two supplies:
//   PlainTokenSupply        next: sample the context's logits (and accept the
//                           token into the sampler); advance: one forward pass
//                           of the delivered token.
//   SpeculativeTokenSupply  next: hand out the tokens the last verify pass
//                           sampled and accepted, one by one (the accepted
//                           drafts are evaluated already), then sample as
//                           plain decoding does; advance: one speculative step
//                           (SpeculativeDecoder::step: draft, verify, keep the
//                           accepted prefix); finish: a stop at a token the
//                           verify pass evaluated trims the context so it
//                           ends as plain decoding leaves it; an interrupt
//                           drops the accepted drafts not handed out yet.
// The loop itself (detokenizing, stop strings, the callback, n_predict, a
// full context, what stays pending) is the same for both.
//
// Thread-safety: thread-compatible; one generation uses a supply at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/context.h"
#include "core/sampler.h"
#include "util/status.h"

namespace les {

class SpeculativeDecoder;

class TokenSupply {
 public:
  struct Next {
    int32_t token = -1;
    bool evaluated = false;  // a forward pass already holds it (no advance needed)
  };
  virtual ~TokenSupply() = default;
  // After the prompt's prefill, inside the prefill phase. Default: nothing.
  virtual void prefill(Context& ctx) { (void)ctx; }
  // The i-th generated token, sampled and accepted into `sampler` (now or by
  // an earlier verify pass). *sample_seconds grows by the time spent
  // sampling here. Errors: the sampler's (with context).
  virtual Result<Next> next(Context& ctx, Sampler& sampler, int32_t i, double* sample_seconds) = 0;
  // Evaluates delivered token `token` (the i-th, not evaluated): afterwards
  // the context's logits (or the next tokens handed out) follow it. `left`:
  // how many more tokens the loop may deliver (INT32_MAX: no limit).
  // Errors: the forward pass's (with context).
  virtual Status advance(Context& ctx, Sampler& sampler, int32_t token, int32_t i, int32_t left) = 0;
  // The loop stops before asking for the next token (an interrupt,
  // Context::interrupt_requested): tokens prepared but not handed out leave
  // the context, so every token it keeps was delivered. Errors: the
  // context's trim. Default: nothing (a plain supply prepares none).
  virtual Status drop_undelivered(Context& ctx) {
    (void)ctx;
    return Status();
  }
  // The loop ended (not by an error) after the last token next() returned
  // (or after drop_undelivered). Errors: the context's trim. Default: nothing.
  virtual Status finish(Context& ctx) {
    (void)ctx;
    return Status();
  }
};

class PlainTokenSupply final : public TokenSupply {
 public:
  Result<Next> next(Context& ctx, Sampler& sampler, int32_t i, double* sample_seconds) override;
  Status advance(Context& ctx, Sampler& sampler, int32_t token, int32_t i, int32_t left) override;
};

class SpeculativeTokenSupply final : public TokenSupply {
 public:
  // `decoder` is borrowed for the supply's life.
  explicit SpeculativeTokenSupply(SpeculativeDecoder& decoder) : decoder_(decoder) {}
  void prefill(Context& ctx) override;
  Result<Next> next(Context& ctx, Sampler& sampler, int32_t i, double* sample_seconds) override;
  Status advance(Context& ctx, Sampler& sampler, int32_t token, int32_t i, int32_t left) override;
  Status drop_undelivered(Context& ctx) override;
  Status finish(Context& ctx) override;

 private:
  SpeculativeDecoder& decoder_;
  PlainTokenSupply sample_;   // when no verified token is waiting
  std::vector<int32_t> seq_;  // the whole sequence so far, earlier turns too (drafters search it)
  // The last step's tokens: ready_[j] for j < n_evaluated_ are accepted
  // drafts at positions first_pos_ + j (evaluated); the last is not.
  std::vector<int32_t> ready_;
  size_t next_ready_ = 0;
  int32_t n_evaluated_ = 0, first_pos_ = 0;
  int32_t last_evaluated_pos_ = -1;  // the last handed-out token's position when evaluated, else -1
};

}  // namespace les
