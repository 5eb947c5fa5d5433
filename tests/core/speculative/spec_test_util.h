// Helpers for the speculative decoding tests: loading a fixture model with a
// resident or streamed context, drafters that force the verifier through
// every path (random drafts: mostly rejected; an oracle that knows the plain
// run's tokens and corrupts some: long accepted prefixes, then a rejection),
// and plain vs speculative generation.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/generate.h"
#include "core/model/context.h"
#include "core/model/model.h"
#include "core/speculative/prompt_lookup.h"
#include "core/speculative/speculative_decoder.h"
#include "core/tokenizer/tokenizer.h"
#include "sched/context_factory.h"

namespace les::test {

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tok;
};

inline Loaded load_model_and_tokenizer(const std::string& path) {
  Loaded l;
  auto m = Model::load(path, ModelParams{});
  REQUIRE(m.ok());
  l.model = std::move(m).value();
  auto t = Tokenizer::from_gguf(l.model->file());
  REQUIRE(t.ok());
  l.tok = std::move(t).value();
  return l;
}

// budget_bytes 0: resident; SIZE_MAX: the smallest budget the model accepts.
inline std::unique_ptr<Context> make_context(const Model& m, const ContextParams& cp, size_t budget_bytes) {
  sched::StreamingParams sp;
  if (budget_bytes == SIZE_MAX) {
    auto min = sched::min_expert_budget_bytes(m, cp, sp);
    REQUIRE(min.ok());
    budget_bytes = *min;
  }
  sp.budget_bytes = budget_bytes;
  auto c = sched::create_context(m, cp, sp);
  REQUIRE(c.ok());
  return std::move(c).value();
}

inline std::unique_ptr<Context> make_context(const Model& m, int32_t n_ctx, size_t budget_bytes,
                                             bool output_hidden = false) {
  ContextParams cp;
  cp.n_ctx = n_ctx;
  cp.output_hidden = output_hidden;
  return make_context(m, cp, budget_bytes);
}

// Proposes uniformly random ids (a fixed seed): nearly every draft is rejected.
class RandomDrafter final : public Drafter {
 public:
  RandomDrafter(int32_t n_vocab, uint64_t seed) : n_vocab_(n_vocab), s_(seed) {}
  const char* name() const noexcept override { return "random"; }
  Result<Draft> propose(const DraftRequest& r) override {
    Draft d;
    for (int32_t i = 0; i < r.max_tokens; ++i) {
      s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
      d.tokens.push_back(static_cast<int32_t>((s_ >> 33) % static_cast<uint64_t>(n_vocab_)));
    }
    return d;
  }

 private:
  int32_t n_vocab_;
  uint64_t s_;
};

// Knows the plain run (`truth`: the whole sequence, prompt first) and drafts
// its continuation, replacing about one token in `corrupt_every` by another:
// accepted prefixes of every length, then a rejection.
class OracleDrafter final : public Drafter {
 public:
  OracleDrafter(std::vector<int32_t> truth, int32_t n_vocab, uint32_t corrupt_every)
      : truth_(std::move(truth)), n_vocab_(n_vocab), every_(corrupt_every) {}
  const char* name() const noexcept override { return "oracle"; }
  Result<Draft> propose(const DraftRequest& r) override {
    Draft d;
    for (int32_t i = 0; i < r.max_tokens; ++i) {
      const size_t at = r.history.size() + static_cast<size_t>(i);
      if (at >= truth_.size()) break;
      int32_t t = truth_[at];
      if (every_ > 0 && ++n_ % every_ == 0) t = (t + 1) % n_vocab_;
      d.tokens.push_back(t);
    }
    return d;
  }

 private:
  std::vector<int32_t> truth_;
  int32_t n_vocab_;
  uint32_t every_;
  uint32_t n_ = 0;
};

inline std::unique_ptr<SpeculativeDecoder> make_decoder(std::unique_ptr<Drafter> d, int32_t draft_max,
                                                        bool forced) {
  SpeculativeParams sp;
  sp.draft_max = draft_max;
  sp.draft_min = forced ? draft_max : 0;
  auto dec = SpeculativeDecoder::create(std::move(d), sp);
  REQUIRE(dec.ok());
  return std::move(dec).value();
}

inline std::unique_ptr<Drafter> lookup_drafter(int32_t ngram_max = 3) {
  PromptLookupParams p;
  p.ngram_max = ngram_max;
  auto d = PromptLookupDrafter::create(p);
  REQUIRE(d.ok());
  return std::move(d).value();
}

struct GenOut {
  std::vector<int32_t> tokens;
  GenerateStats stats;
  int32_t n_past = 0;
  std::vector<int32_t> ctx_tokens;  // the context's token ids afterwards (Context::tokens())
  int32_t pending = -1;             // and its pending token
  std::vector<uint8_t> state;       // Context::save_state() afterwards
  std::vector<float> next_logits;   // after evaluating the pending token: the state generation left
};

// Greedy generation of n tokens from `prompt`; `spec` null = plain. With
// `probe`, the pending token is evaluated afterwards for next_logits (the
// context then holds no pending token); without, the context is left as
// generation left it (a later call continues the session).
inline GenOut generate_greedy(Context& ctx, const Tokenizer& tok, const std::string& prompt, int32_t n,
                              SpeculativeDecoder* spec, std::vector<std::string> stop = {}, bool probe = true) {
  SamplerParams sp;
  sp.temperature = 0.0f;
  auto s = Sampler::create(sp);
  REQUIRE(s.ok());
  GenerateParams gp;
  gp.n_predict = n;
  gp.speculative = spec;
  gp.stop = std::move(stop);
  auto st = generate_tokens(ctx, tok, *s, prompt, gp, nullptr);
  REQUIRE(st.ok());
  GenOut o;
  o.tokens = st->tokens;
  o.stats = *st;
  o.n_past = ctx.n_past();
  o.ctx_tokens.assign(ctx.tokens().begin(), ctx.tokens().end());
  o.pending = ctx.pending();
  auto state = ctx.save_state();
  REQUIRE(state.ok());
  o.state = std::move(state).value();
  if (probe && ctx.pending() >= 0) {
    REQUIRE(ctx.decode({}).ok());  // evaluates the pending token
    o.next_logits.assign(ctx.logits().begin(), ctx.logits().end());
  }
  return o;
}

}  // namespace les::test
