// Lossless speculative decoding, greedy: on every fixture model, resident and
// streamed (a quarter of the experts, and the smallest budget, where a verify
// pass's union exceeds the cache and runs in waves), the tokens equal plain
// greedy decoding token for token, and the context ends in the same state
// (same n_past, bit-identical logits for the next token). Drafters: prompt
// lookup, random drafts (rejections) and an oracle that corrupts some tokens
// (long accepted prefixes), all with the draft length forced to the maximum
// so every path of the verifier runs. Also: a verify pass near n_ctx is
// shortened, never writes past it; stop strings in the middle of a pass; a
// later call continues the session (pending token, no BOS) as plain decoding.
#include <catch2/catch.hpp>

#include <cstring>

#include "spec_test_util.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::test;

namespace {

const char* kPrompt =
    "The door of the room was open, and she went in. The door of the room was open, and she went in. The door";

struct Budget {
  const char* name;
  size_t bytes;  // 0 resident, SIZE_MAX the minimum
  bool quarter;
};

size_t quarter_budget(const Model& m, int32_t n_ctx) {
  ContextParams cp;
  cp.n_ctx = n_ctx;
  auto min = sched::min_expert_budget_bytes(m, cp, {});
  REQUIRE(min.ok());
  const Hparams& hp = m.hparams();
  int64_t layers = 0;
  for (int32_t l = 0; l < hp.n_layer; ++l) layers += m.weights().layers[static_cast<size_t>(l)].is_moe();
  // min = scratch + k slots; a quarter of the experts = n_layer * n_expert / 4 slots.
  auto src = make_context(m, n_ctx, SIZE_MAX);
  const auto* s = sched::streaming_source(*src);
  REQUIRE(s != nullptr);
  const size_t slot = s->layout().slot_bytes();
  const size_t want = static_cast<size_t>(layers * hp.n_expert / 4);
  return *min + slot * (want > static_cast<size_t>(hp.n_expert_used) ? want - hp.n_expert_used : 0);
}

void check_same(const GenOut& plain, const GenOut& spec) {
  CHECK(spec.tokens == plain.tokens);
  CHECK(spec.n_past == plain.n_past);
  CHECK(spec.stats.n_generated == plain.stats.n_generated);
  CHECK(spec.stats.stop_reason == plain.stats.stop_reason);
  // The session: the same token ids (accepted drafts kept, rejected ones
  // dropped), the same pending token, and a saved state byte for byte equal.
  CHECK(spec.ctx_tokens == plain.ctx_tokens);
  CHECK(spec.pending == plain.pending);
  CHECK(spec.state == plain.state);
  REQUIRE(spec.next_logits.size() == plain.next_logits.size());
  // memcmp with a null pointer is undefined even for 0 bytes (UBSan): an
  // empty row (a stop that left no logits) compares equal by the size check.
  if (!plain.next_logits.empty())
    CHECK(std::memcmp(spec.next_logits.data(), plain.next_logits.data(), plain.next_logits.size() * sizeof(float)) == 0);
}

// all_paths: every budget (resident, a quarter of the experts, the minimum)
// and every drafter; otherwise resident and the minimum budget with the
// oracle and random drafters (the CI time of the synthetic files).
void identity_on(const std::string& rel, int32_t n_tokens, bool all_paths) {
  INFO(rel);
  const std::string path = fixture_path(rel);
  if (path.empty()) return;
  Loaded l = load_model_and_tokenizer(path);
  const int32_t n_ctx = 160;
  const int32_t n_vocab = l.model->hparams().n_vocab;
  const bool moe = l.model->hparams().n_expert > 0;
  std::vector<Budget> budgets = {{"resident", 0, false}};
  if (moe && all_paths) budgets.push_back({"quarter", 0, true});
  if (moe) budgets.push_back({"minimum", SIZE_MAX, false});
  GenOut plain;
  {
    auto ctx = make_context(*l.model, n_ctx, 0);
    plain = generate_greedy(*ctx, *l.tok, kPrompt, n_tokens, nullptr);
  }
  auto prompt_ids = l.tok->tokenize(kPrompt, true, false);
  REQUIRE(prompt_ids.ok());
  std::vector<int32_t> truth = *prompt_ids;
  truth.insert(truth.end(), plain.tokens.begin(), plain.tokens.end());
  for (const Budget& b : budgets) {
    INFO(b.name);
    const size_t bytes = b.quarter ? quarter_budget(*l.model, n_ctx) : b.bytes;
    {
      auto ctx = make_context(*l.model, n_ctx, bytes);
      GenOut p2 = generate_greedy(*ctx, *l.tok, kPrompt, n_tokens, nullptr);  // streamed plain = resident plain
      CHECK(p2.tokens == plain.tokens);
    }
    int32_t accepted = 0, rejected = 0;
    for (int kind = all_paths ? 0 : 1; kind < 3; ++kind) {
      INFO("drafter " << kind);
      std::unique_ptr<Drafter> d = kind == 0   ? lookup_drafter()
                                   : kind == 1 ? std::unique_ptr<Drafter>(new RandomDrafter(n_vocab, 77))
                                               : std::unique_ptr<Drafter>(new OracleDrafter(truth, n_vocab, 5));
      auto dec = make_decoder(std::move(d), kind == 2 ? 6 : 4, /*forced=*/true);
      auto ctx = make_context(*l.model, n_ctx, bytes);
      GenOut s = generate_greedy(*ctx, *l.tok, kPrompt, n_tokens, dec.get());
      check_same(plain, s);
      accepted += dec->stats().total.n_accepted;
      rejected += dec->stats().total.n_verified - dec->stats().total.n_accepted;
    }
    CHECK(accepted > 0);  // the paths ran: accepted drafts and rejected ones
    CHECK(rejected > 0);
  }
}

}  // namespace

TEST_CASE("speculative greedy = plain greedy: trained fixture", "[speculative]") {
  identity_on("trained/tiny-qwen3moe-F16.gguf", 40, /*all_paths=*/true);
  for (const char* f : {"trained/tiny-qwen3moe-Q4_K_M.gguf", "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf"})
    identity_on(f, 32, /*all_paths=*/false);
}

TEST_CASE("speculative greedy = plain greedy: synthetic fixtures", "[speculative]") {
  for (const char* f : {"synthetic/qwen3moe-F16.gguf", "synthetic/qwen3moe-Q8_0.gguf", "synthetic/qwen3moe-Q4_K_M.gguf",
                        "synthetic/qwen3moe-Q3_K_M.gguf", "synthetic/qwen3moe-MIXED.gguf",
                        "synthetic/mixtral-Q4_K_M.gguf", "synthetic/qwen2moe-Q4_K_M.gguf",
                        "synthetic/llama-dense-Q4_K_M.gguf"})
    identity_on(f, 20, /*all_paths=*/false);
}

// Hybrid models: the verify pass checkpoints the recurrent (Gated DeltaNet)
// state and trim() replays the journal up to the accepted prefix.
TEST_CASE("speculative greedy = plain greedy: qwen35moe (recurrent state)", "[speculative]") {
  identity_on("synthetic/qwen35moe-F16.gguf", 24, /*all_paths=*/true);
  for (const char* f : {"synthetic/qwen35moe-Q4_K_M.gguf", "synthetic/qwen35moe-MIXED.gguf",
                        "synthetic/qwen35moe-mtp-F16.gguf"})
    identity_on(f, 20, /*all_paths=*/false);
}

TEST_CASE("speculative: a verify pass near n_ctx is shortened, never written past it", "[speculative]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l = load_model_and_tokenizer(path);
  auto ids = l.tok->tokenize(kPrompt, true, false);
  REQUIRE(ids.ok());
  const int32_t n_ctx = static_cast<int32_t>(ids->size()) + 13;  // room for 13 positions
  GenOut plain;
  {
    auto ctx = make_context(*l.model, n_ctx, 0);
    plain = generate_greedy(*ctx, *l.tok, kPrompt, 100, nullptr);
  }
  CHECK(plain.stats.stop_reason == StopReason::context_full);
  std::vector<int32_t> truth = *ids;
  truth.insert(truth.end(), plain.tokens.begin(), plain.tokens.end());
  truth.resize(truth.size() + 16, 0);  // the oracle drafts past the end too
  for (size_t bytes : {size_t{0}, SIZE_MAX}) {
    auto dec = make_decoder(std::unique_ptr<Drafter>(new OracleDrafter(truth, l.model->hparams().n_vocab, 0)), 8,
                            true);
    auto ctx = make_context(*l.model, n_ctx, bytes);
    GenOut s = generate_greedy(*ctx, *l.tok, kPrompt, 100, dec.get());
    CHECK(s.tokens == plain.tokens);
    CHECK(s.stats.stop_reason == StopReason::context_full);
    CHECK(s.n_past == n_ctx);
    for (const VerifyPassStats& p : dec->stats().passes) CHECK(p.n_verified <= 8);
    // The last pass could only verify what fit: passes never asked for more.
    REQUIRE(!dec->stats().passes.empty());
    CHECK(dec->stats().passes.back().n_verified < 8);
  }
}

TEST_CASE("speculative: stops inside a verify pass leave the context as plain decoding does", "[speculative]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l = load_model_and_tokenizer(path);
  GenOut plain0;
  {
    auto ctx = make_context(*l.model, 200, 0);
    plain0 = generate_greedy(*ctx, *l.tok, kPrompt, 30, nullptr);
  }
  auto ids = l.tok->tokenize(kPrompt, true, false);
  REQUIRE(ids.ok());
  std::vector<int32_t> truth = *ids;
  truth.insert(truth.end(), plain0.tokens.begin(), plain0.tokens.end());
  // Stop strings that end the text in the middle of long accepted runs; n_predict values likewise.
  const std::string piece = l.tok->vocab().text(plain0.tokens[9]);
  for (int32_t n : {1, 2, 5, 11, 30}) {
    INFO("n_predict " << n);
    auto ctx0 = make_context(*l.model, 200, 0);
    GenOut plain = generate_greedy(*ctx0, *l.tok, kPrompt, n, nullptr, {"room"});
    auto dec = make_decoder(std::unique_ptr<Drafter>(new OracleDrafter(truth, l.model->hparams().n_vocab, 0)), 8,
                            true);
    auto ctx = make_context(*l.model, 200, 0);
    GenOut s = generate_greedy(*ctx, *l.tok, kPrompt, n, dec.get(), {"room"});
    check_same(plain, s);
  }
}

TEST_CASE("speculative: later calls continue the session as plain decoding does", "[speculative]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l = load_model_and_tokenizer(path);
  const char* turns[] = {kPrompt, " and then she", " The room"};
  const int32_t n_per_turn[] = {7, 9, 6};  // every turn ends inside a verify pass for some drafts
  auto run = [&](SpeculativeDecoder* dec, size_t budget) {
    auto ctx = make_context(*l.model, 200, budget);
    std::vector<GenOut> out;
    for (int t = 0; t < 3; ++t)
      out.push_back(generate_greedy(*ctx, *l.tok, turns[t], n_per_turn[t], dec, {}, /*probe=*/t == 2));
    return out;
  };
  const std::vector<GenOut> plain = run(nullptr, 0);
  for (const GenOut& o : plain) REQUIRE(o.pending == o.tokens.back());  // each turn left its last token pending
  std::vector<int32_t> truth = plain.back().ctx_tokens;
  truth.push_back(plain.back().pending);
  truth.resize(truth.size() + 16, 0);
  for (size_t budget : {size_t{0}, SIZE_MAX}) {
    for (int kind = 0; kind < 3; ++kind) {
      INFO("budget " << budget << " drafter " << kind);
      std::unique_ptr<Drafter> d = kind == 0   ? lookup_drafter()
                                   : kind == 1 ? std::unique_ptr<Drafter>(new OracleDrafter(truth, l.model->hparams().n_vocab, 0))
                                               : std::unique_ptr<Drafter>(new OracleDrafter(truth, l.model->hparams().n_vocab, 3));
      auto dec = make_decoder(std::move(d), 8, /*forced=*/true);
      const std::vector<GenOut> spec = run(dec.get(), budget);
      for (int t = 0; t < 3; ++t) {
        INFO("turn " << t);
        check_same(plain[static_cast<size_t>(t)], spec[static_cast<size_t>(t)]);
      }
      if (kind == 1) CHECK(dec->stats().total.n_accepted > 0);
    }
  }
}
