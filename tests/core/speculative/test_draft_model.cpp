// A draft model drafter (draft_model.h): the trained fixture's Q4_K_M and
// mixed Q3_K copies draft for its F16 file. Greedy output and final state
// equal plain decoding, resident and streamed (smallest budget); the drafts
// are mostly accepted (the copies share the F16 file's greedy choices almost
// everywhere). A sampled run with draft sampling (q = the draft's
// distribution) is reproducible for a seed. Vocabulary checks: a model with
// another vocabulary, and vocabularies that differ in one token's text, type,
// size or BOS id, are refused with a message naming the difference.
#include <catch2/catch.hpp>

#include <cstring>

#include "core/speculative/draft_model.h"
#include "spec_test_util.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::test;

namespace {

const char* kPrompt = "It is a truth universally acknowledged, that a single man";

// sampling null: greedy drafts.
std::unique_ptr<Drafter> draft_drafter(const Tokenizer& target_tok, const Model& draft,
                                       const SamplerParams* sampling = nullptr) {
  DraftModelParams p;
  p.n_ctx = 200;
  if (sampling) p.sampling = *sampling;
  auto d = DraftModelDrafter::create(target_tok.vocab(), draft, p);
  INFO(d.status().to_string());
  REQUIRE(d.ok());
  return std::move(d).value();
}

}  // namespace

TEST_CASE("draft model: greedy output = plain greedy, drafts mostly accepted", "[speculative]") {
  LES_REQUIRE_FIXTURE(target_path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded t = load_model_and_tokenizer(target_path);
  GenOut plain;
  {
    auto ctx = make_context(*t.model, 200, 0);
    plain = generate_greedy(*ctx, *t.tok, kPrompt, 48, nullptr);
  }
  for (const char* rel : {"trained/tiny-qwen3moe-Q4_K_M.gguf", "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf"}) {
    const std::string dpath = fixture_path(rel);
    if (dpath.empty()) continue;
    INFO(rel);
    Loaded d = load_model_and_tokenizer(dpath);
    for (size_t budget : {size_t{0}, SIZE_MAX}) {
      INFO((budget ? "streamed, smallest budget" : "resident"));
      auto dec = make_decoder(draft_drafter(*t.tok, *d.model), 4, /*forced=*/true);
      auto ctx = make_context(*t.model, 200, budget);
      GenOut s = generate_greedy(*ctx, *t.tok, kPrompt, 48, dec.get());
      CHECK(s.tokens == plain.tokens);
      CHECK(s.n_past == plain.n_past);
      REQUIRE(s.next_logits.size() == plain.next_logits.size());
      // memcmp with a null pointer is undefined even for 0 bytes (UBSan).
      if (!plain.next_logits.empty())
        CHECK(std::memcmp(s.next_logits.data(), plain.next_logits.data(), plain.next_logits.size() * sizeof(float)) ==
            0);
      const VerifyPassStats& tot = dec->stats().total;
      std::printf("%s drafting for F16 (%s): %d of %d drafts accepted (%.1f%%), %.2f tokens per target pass\n", rel,
                  budget ? "streamed" : "resident", tot.n_accepted, tot.n_verified,
                  tot.n_verified ? 100.0 * tot.n_accepted / tot.n_verified : 0.0, dec->stats().tokens_per_pass());
      CHECK(tot.n_verified > 0);
      CHECK(tot.n_accepted * 2 > tot.n_verified);  // a quantised copy agrees with its F16 file mostly
    }
  }
}

TEST_CASE("draft model: sampled drafts (q = the draft's distribution) are reproducible per seed", "[speculative]") {
  LES_REQUIRE_FIXTURE(target_path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(draft_path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  Loaded t = load_model_and_tokenizer(target_path);
  Loaded d = load_model_and_tokenizer(draft_path);
  SamplerParams sp;
  sp.temperature = 0.9f;
  sp.seed = 11;
  std::vector<int32_t> first;
  for (int rep = 0; rep < 2; ++rep) {
    SamplerParams dsp = sp;
    dsp.seed = 12;
    auto dec = make_decoder(draft_drafter(*t.tok, *d.model, &dsp), 4, /*forced=*/true);
    auto ctx = make_context(*t.model, 200, 0);
    auto s = Sampler::create(sp);
    REQUIRE(s.ok());
    GenerateParams gp;
    gp.n_predict = 24;
    gp.speculative = dec.get();
    auto st = generate_tokens(*ctx, *t.tok, *s, kPrompt, gp, nullptr);
    REQUIRE(st.ok());
    CHECK(st->tokens.size() == 24);
    CHECK(dec->stats().total.n_accepted > 0);
    if (rep == 0) first = st->tokens;
    else CHECK(st->tokens == first);
  }
}

TEST_CASE("draft model: another vocabulary is refused, naming the difference", "[speculative]") {
  LES_REQUIRE_FIXTURE(target_path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(other_path, "synthetic/qwen3moe-Q4_K_M.gguf");
  Loaded t = load_model_and_tokenizer(target_path);
  Loaded o = load_model_and_tokenizer(other_path);
  auto d = DraftModelDrafter::create(t.tok->vocab(), *o.model, {});
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().code() == StatusCode::invalid_argument);
  INFO(d.status().message());
  CHECK(d.status().message().rfind("draft model: ", 0) == 0);

  auto make = [](std::vector<std::string> tokens, std::vector<TokenType> types, int64_t bos) {
    VocabData v;
    v.model = "llama";
    v.tokens = std::move(tokens);
    v.scores.assign(v.tokens.size(), 0.0f);
    v.types = std::move(types);
    v.bos = bos;
    v.eos = 2;
    auto r = Vocab::build(std::move(v));
    REQUIRE(r.ok());
    return std::move(r).value();
  };
  const std::vector<std::string> toks = {"<unk>", "<s>", "</s>", "a", "b", "c"};
  const std::vector<TokenType> types = {TokenType::unknown, TokenType::control, TokenType::control,
                                        TokenType::normal,  TokenType::normal,  TokenType::normal};
  const Vocab base = make(toks, types, 1);
  CHECK(check_same_vocab(base, make(toks, types, 1)).ok());
  const std::vector<std::string> toks2 = {"<unk>", "<s>", "</s>", "a", "B", "c"};
  Status s = check_same_vocab(base, make(toks2, types, 1));
  CHECK(s.message() == "draft model: token 4 is 'B' in the draft vocabulary but 'b' in the target's");
  auto types2 = types;
  types2[5] = TokenType::user_defined;
  s = check_same_vocab(base, make(toks, types2, 1));
  CHECK(s.message().find("token 5 ('c') has type") != std::string::npos);
  auto toks3 = toks;
  toks3.push_back("d");
  auto types3 = types;
  types3.push_back(TokenType::normal);
  s = check_same_vocab(base, make(toks3, types3, 1));
  CHECK(s.message() == "draft model: its vocabulary has 7 tokens, the target's 6");
  s = check_same_vocab(base, make(toks, types, 3));
  CHECK(s.message().find("BOS/EOS ids 3/2") != std::string::npos);
}

TEST_CASE("draft model: the prompt is decoded in the prefill phase, the first draft catches up nothing",
          "[speculative]") {
  LES_REQUIRE_FIXTURE(target_path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(draft_path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  Loaded t = load_model_and_tokenizer(target_path);
  Loaded d = load_model_and_tokenizer(draft_path);
  auto prompt_ids = t.tok->tokenize(kPrompt, /*add_special=*/true, false);
  REQUIRE(prompt_ids.ok());
  GenOut plain;
  {
    auto ctx = make_context(*t.model, 200, 0);
    plain = generate_greedy(*ctx, *t.tok, kPrompt, 24, nullptr);
  }
  // Every step drafts (forced), so nothing is ever decoded plainly behind the
  // drafter's back: with the prompt read in the prefill, no step catches up.
  auto drafter = draft_drafter(*t.tok, *d.model);
  const auto* dm = static_cast<const DraftModelDrafter*>(drafter.get());
  auto dec = make_decoder(std::move(drafter), 4, /*forced=*/true);
  auto ctx = make_context(*t.model, 200, 0);
  GenOut s = generate_greedy(*ctx, *t.tok, kPrompt, 24, dec.get());
  CHECK(s.tokens == plain.tokens);
  CHECK(s.n_past == plain.n_past);
  CHECK(dec->last_prefill_status().ok());
  CHECK(dm->counters().prefill_tokens == static_cast<int64_t>(prompt_ids->size()));
  CHECK(dm->counters().prefill_seconds > 0);
  CHECK(dm->counters().catch_up_tokens == 0);
  CHECK(dm->counters().catch_up_seconds == 0);
  CHECK(dec->stats().total.n_verified > 0);

  // Driven by step() alone (no prefill: a caller outside generate), the
  // first draft reads the prompt itself, counted as catch-up.
  auto drafter2 = draft_drafter(*t.tok, *d.model);
  const auto* dm2 = static_cast<const DraftModelDrafter*>(drafter2.get());
  auto dec2 = make_decoder(std::move(drafter2), 4, /*forced=*/true);
  auto ctx2 = make_context(*t.model, 200, 0);
  REQUIRE(ctx2->decode(*prompt_ids).ok());
  auto sp = Sampler::create(SamplerParams{.temperature = 0.0f});
  REQUIRE(sp.ok());
  auto first = sp->sample(ctx2->logits());
  REQUIRE(first.ok());
  std::vector<int32_t> hist = *prompt_ids;
  hist.push_back(*first);
  auto r = dec2->step(*ctx2, *sp, hist, 8);
  REQUIRE(r.ok());
  CHECK(dm2->counters().prefill_tokens == 0);
  CHECK(dm2->counters().catch_up_tokens == static_cast<int64_t>(prompt_ids->size()) + 1);
}

TEST_CASE("draft model: the text after the last embedding row is what it reads", "[speculative]") {
  using V = std::vector<int32_t>;
  auto tail = [](const V& h) {
    const auto t = les::text_after_embeddings(h);
    return V(t.begin(), t.end());
  };
  CHECK(tail({1, 2, 3}) == V{1, 2, 3});
  CHECK(tail({1, -1, -1, 4, 5}) == V{4, 5});
  CHECK(tail({-1, 2, -1, -1, 7}) == V{7});
  CHECK(tail({1, -1}).empty());
  CHECK(tail({}).empty());
}
