// Draft model drafting: a second, smaller GGUF with the same vocabulary (for
// example a Q4_K_M copy of the target, or a small model of the same family)
// proposes the tokens, run resident on its own Context.
//
// propose(): the draft context mirrors DraftRequest::history (it keeps the
// longest common prefix of what it holds and the history, decodes the rest
// in one batch: the prompt's first prefill, then the tokens the target
// accepted since), then drafts up to max_tokens tokens one by one with its
// own sampler: greedy (SamplerParams temperature 0, the default: q = 1 on the
// argmax) or sampling (q = the draft sampler's distribution, which the
// verifier's rejection sampling needs; acceptance is highest with the
// target's own sampling parameters; penalties are not applied to drafts, the
// verifier applies the target's). Each draft but the last is decoded into
// the draft context; rejected ones are trimmed away by the next propose().
// Images: the draft model reads token ids only, so it mirrors the text after
// the history's last position filled from an embedding row (id
// kEmbeddingToken = -1, an image's; text_after_embeddings()): its drafts then
// follow that text without the image (lossless as always; the verifier
// decides). A later image makes it start over from the text after that one.
// The history is what SpeculativeDecoder gives: the target's whole sequence
// (earlier turns of its context too). generate() calls prefill() with the
// prompt inside its prefill phase, so the first propose() decodes one token.
//
// Vocabulary check (check_same_vocab): the same number of tokens, the same
// text and type for every id, and the same BOS/EOS ids; otherwise
// invalid_argument naming the first difference. A token's text is what the
// verifier compares ids by, so any difference would make drafts meaningless.
//
// Thread-safety: thread-compatible. The draft model must outlive the drafter.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/model/context.h"
#include "core/model/model.h"
#include "core/sampler.h"
#include "core/speculative/drafter.h"
#include "core/tokenizer/vocab.h"

namespace les {

// The part of `history` after its last negative id (a position filled from an
// embedding row); all of it when there is none.
std::span<const int32_t> text_after_embeddings(std::span<const int32_t> history) noexcept;

// Errors: invalid_argument naming the first difference (sizes, token id with
// both texts or types, BOS/EOS ids).
Status check_same_vocab(const Vocab& target, const Vocab& draft);

struct DraftModelParams {
  int32_t n_ctx = 0;      // the draft context's positions; 0 = min(draft's context_length, 4096)
  int n_threads = 0;      // 0 = the draft ModelParams.n_threads, then hardware
  SamplerParams sampling = greedy_sampling();  // how drafts are drawn (temperature 0: greedy, q = 1)

  static SamplerParams greedy_sampling() {
    SamplerParams s;
    s.temperature = 0.0f;
    return s;
  }
};

// What a DraftModelDrafter decoded outside drafting: in prefill() (inside the
// target's prefill phase) and to catch up in propose() (more than the one
// token a step after a draft needs: the text decoded plainly since the
// drafter last saw it, or the prompt when prefill() was not called).
struct DraftModelCounters {
  int64_t prefill_tokens = 0;     // tokens decoded by prefill()
  double prefill_seconds = 0;     // their wall time
  int64_t catch_up_tokens = 0;    // tokens decoded to catch up inside propose()
  double catch_up_seconds = 0;    // their wall time (part of the decode phase)
};

class DraftModelDrafter final : public Drafter {
 public:
  // Errors: invalid_argument (vocabularies differ: check_same_vocab; bad
  // sampling parameters), as Vocab::from_gguf of the draft file and
  // Context::create (the draft runs resident).
  static Result<std::unique_ptr<DraftModelDrafter>> create(const Vocab& target_vocab, const Model& draft,
                                                           const DraftModelParams& p);

  const char* name() const noexcept override { return "draft-model"; }
  // Errors: the draft context's (context_full when history + drafts exceed
  // its n_ctx) and its sampler's; the step then decodes plainly.
  Result<Draft> propose(const DraftRequest& r) override;
  // Decodes the part of `sequence` its context does not hold (the prompt),
  // counted in counters().prefill_*. Errors: the draft context's
  // (context_full when the sequence exceeds its n_ctx).
  Status prefill(const Context& target, std::span<const int32_t> sequence) override;
  double seconds_per_token() const noexcept override { return sec_per_token_; }
  // The history tokens past the common prefix with the draft context, times
  // the measured seconds per caught-up token.
  double catch_up_seconds(std::span<const int32_t> history) const override;

  const Context& context() const noexcept { return *ctx_; }
  const DraftModelCounters& counters() const noexcept { return counters_; }

 private:
  DraftModelDrafter(std::unique_ptr<Context> ctx, Sampler sampler)
      : ctx_(std::move(ctx)), sampler_(std::move(sampler)) {}

  // Makes the draft context hold `tokens`: keeps the common prefix (at most
  // keep_max tokens of it) and decodes the rest in one batch; returns how
  // many it decoded.
  Result<size_t> sync(std::span<const int32_t> tokens, size_t keep_max);
  void record_sync(size_t n, double seconds);  // updates sec_per_sync_

  std::unique_ptr<Context> ctx_;
  Sampler sampler_;
  std::vector<int32_t> held_;  // the tokens the draft context holds (positions 0 ..)
  double sec_per_token_ = 0;   // moving average of drafting time per proposed token (catch-up excluded)
  double sec_per_sync_ = 0;    // moving average of catch-up time per token the draft context had not seen
  DraftModelCounters counters_;
  int32_t undecoded_ = -1;     // the last proposed token (not decoded into the context), -1 after a sync
};

}  // namespace les
