// The sequence state of a hybrid model (qwen35moe: KV cache for the attention
// layer, conv and delta-rule states for the linear-attention layers):
//  * batch invariance: every token's logits are bit-identical whether it is
//    decoded alone, in a prefill chunk of any size, or in a verify batch;
//  * checkpoint / rollback: rolling back to any journaled position and
//    replaying gives bit-identical logits to a run that never went further;
//    unreachable positions are refused with a message and change nothing;
//  * a decode that fails midway (an expert read error) leaves the state as it
//    was: the next decodes equal an undisturbed run.
#include <string>
#include <vector>

#include "golden_support.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::test;

namespace {

// Prompt 1 of the reference and its greedy continuation: 16 + 32 tokens.
std::vector<int32_t> fixture_tokens(const std::string& ref_path) {
  const auto ref = load_json(ref_path);
  const auto& p = ref["prompts"][1];
  std::vector<int32_t> t = p["tokens_model"].get<std::vector<int32_t>>();
  for (int32_t id : p["greedy"]["ids"].get<std::vector<int32_t>>()) t.push_back(id);
  return t;
}

std::unique_ptr<Context> context(const Model& m, int32_t n_batch) {
  ContextParams cp;
  cp.n_ctx = 128;
  cp.n_batch = n_batch;
  auto c = Context::create(m, cp);
  REQUIRE(c.ok());
  return std::move(c).value();
}

std::vector<float> row(std::span<const float> all, size_t i, size_t n_vocab) {
  return std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(i * n_vocab),
                            all.begin() + static_cast<std::ptrdiff_t>((i + 1) * n_vocab));
}

std::vector<float> vec(std::span<const float> s) { return std::vector<float>(s.begin(), s.end()); }

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// One token at a time: the logits after each token.
std::vector<std::vector<float>> one_by_one(Context& ctx, const std::vector<int32_t>& toks, size_t from, size_t to) {
  std::vector<std::vector<float>> out;
  for (size_t i = from; i < to; ++i) {
    REQUIRE(ctx.decode(std::span<const int32_t>(&toks[i], 1)).ok());
    out.push_back(vec(ctx.logits()));
  }
  return out;
}

// The model's resident experts, except that once armed, get() fails at the
// `fail_at`-th request (counting from 1) after arming.
class FailingExperts final : public ExpertSource {
 public:
  explicit FailingExperts(ExpertSource& inner) : inner_(inner) {}
  void arm(int fail_at) {
    fail_at_ = fail_at;
    calls_ = 0;
  }
  void disarm() { fail_at_ = -1; }
  Result<ExpertMatrices> get(int32_t layer, int32_t expert) override {
    if (fail_at_ > 0 && ++calls_ == fail_at_) return io_error("injected read error");
    return inner_.get(layer, expert);
  }

 private:
  ExpertSource& inner_;
  int fail_at_ = -1, calls_ = 0;
};

}  // namespace

TEST_CASE("qwen35moe: a token's logits do not depend on the batch it is decoded in", "[sequence_state]") {
  for (const char* name : {"qwen35moe-F16", "qwen35moe-Q4_K_M"}) {
    LES_REQUIRE_FIXTURE(path, std::string("synthetic/") + name + ".gguf");
    LES_REQUIRE_FIXTURE(ref, std::string("synthetic/reference/") + name + ".json");
    INFO(name);
    auto model = load_model(path);
    const size_t V = static_cast<size_t>(model->hparams().n_vocab);
    const std::vector<int32_t> toks = fixture_tokens(ref);
    const size_t n = toks.size();

    auto whole = context(*model, 512);
    REQUIRE(whole->decode(toks, /*all_logits=*/true).ok());
    const std::vector<float> all = vec(whole->logits_all());

    auto chunked = context(*model, 5);  // prefill in chunks of 5: state carried across chunks
    REQUIRE(chunked->decode(toks, true).ok());
    CHECK(same(vec(chunked->logits_all()), all));

    auto single = context(*model, 512);
    const auto rows = one_by_one(*single, toks, 0, n);
    for (size_t i = 0; i < n; ++i) {
      INFO("token " << i);
      CHECK(same(rows[i], row(all, i, V)));
    }

    // A verify batch of 4 after a prefill of 20.
    auto verify = context(*model, 512);
    REQUIRE(verify->decode(std::span<const int32_t>(toks.data(), 20)).ok());
    REQUIRE(verify->decode(std::span<const int32_t>(toks.data() + 20, 4), true).ok());
    for (size_t i = 0; i < 4; ++i) CHECK(same(row(verify->logits_all(), i, V), row(all, 20 + i, V)));
  }
}

TEST_CASE("qwen35moe: rollback to a checkpoint and replay gives bit-identical logits", "[sequence_state]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-F16.gguf");
  LES_REQUIRE_FIXTURE(ref, "synthetic/reference/qwen35moe-F16.json");
  auto model = load_model(path);
  const size_t V = static_cast<size_t>(model->hparams().n_vocab);
  const std::vector<int32_t> toks = fixture_tokens(ref);
  const size_t n0 = 16;  // prompt; then "drafts" toks[16..22)

  // Reference: the prompt, then one token at a time, never rolled back.
  auto plain = context(*model, 512);
  REQUIRE(plain->decode(std::span<const int32_t>(toks.data(), n0)).ok());
  const auto want = one_by_one(*plain, toks, n0, n0 + 8);

  auto ctx = context(*model, 512);
  REQUIRE(ctx->decode(std::span<const int32_t>(toks.data(), n0)).ok());
  REQUIRE(ctx->checkpoint(6).ok());
  CHECK(ctx->sequence().checkpoint_pos() == static_cast<int32_t>(n0));
  // A verify batch of 6 "drafts" ...
  REQUIRE(ctx->decode(std::span<const int32_t>(toks.data() + n0, 6), true).ok());
  for (size_t i = 0; i < 6; ++i) CHECK(same(row(ctx->logits_all(), i, V), want[i]));
  // ... of which 2 are accepted: back to n0 + 2, then the next tokens again.
  REQUIRE(ctx->trim(static_cast<int32_t>(n0 + 2)).ok());
  CHECK(ctx->n_past() == static_cast<int32_t>(n0 + 2));
  const auto again = one_by_one(*ctx, toks, n0 + 2, n0 + 5);
  for (size_t i = 0; i < again.size(); ++i) CHECK(same(again[i], want[2 + i]));
  // Back to the checkpoint itself, and to the deepest journaled position.
  REQUIRE(ctx->trim(static_cast<int32_t>(n0)).ok());
  CHECK(same(one_by_one(*ctx, toks, n0, n0 + 1)[0], want[0]));
  REQUIRE(ctx->decode(std::span<const int32_t>(toks.data() + n0 + 1, 5)).ok());
  REQUIRE(ctx->trim(static_cast<int32_t>(n0 + 6)).ok());
  const auto tail = one_by_one(*ctx, toks, n0 + 6, n0 + 8);
  CHECK(same(tail[0], want[6]));
  CHECK(same(tail[1], want[7]));

  // Beyond the journal (6 tokens) and before the checkpoint: refused, nothing changes.
  Status far = ctx->trim(static_cast<int32_t>(n0 + 7));
  REQUIRE_FALSE(far.ok());
  CHECK(far.code() == StatusCode::invalid_argument);
  CHECK(far.message().find("[16, 22]") != std::string::npos);
  Status before = ctx->trim(static_cast<int32_t>(n0 - 1));
  REQUIRE_FALSE(before.ok());
  CHECK(ctx->n_past() == static_cast<int32_t>(n0 + 8));
  REQUIRE(ctx->decode(std::span<const int32_t>(toks.data() + n0 + 8, 1)).ok());
  const auto next_plain = one_by_one(*plain, toks, n0 + 8, n0 + 9);
  CHECK(same(vec(ctx->logits()), next_plain[0]));

  // Without a checkpoint only 0 and n_past are reachable.
  ctx->drop_checkpoint();
  Status none = ctx->trim(static_cast<int32_t>(n0));
  REQUIRE_FALSE(none.ok());
  CHECK(none.message().find("no checkpoint") != std::string::npos);
  REQUIRE(ctx->trim(0).ok());
  CHECK(ctx->n_past() == 0);
  REQUIRE(ctx->decode(std::span<const int32_t>(toks.data(), n0)).ok());
  auto fresh = context(*model, 512);
  REQUIRE(fresh->decode(std::span<const int32_t>(toks.data(), n0)).ok());
  CHECK(same(vec(ctx->logits()), vec(fresh->logits())));
}

TEST_CASE("qwen35moe: a decode that fails midway leaves the sequence state unchanged", "[sequence_state]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-F16.gguf");
  LES_REQUIRE_FIXTURE(ref, "synthetic/reference/qwen35moe-F16.json");
  auto model = load_model(path);
  const std::vector<int32_t> toks = fixture_tokens(ref);
  auto plain = context(*model, 512);
  REQUIRE(plain->decode(std::span<const int32_t>(toks.data(), 24)).ok());
  const auto want = one_by_one(*plain, toks, 24, 27);

  // The failing decode: 8 tokens in chunks of 4. 8 experts x 4 trunk layers
  // per chunk: request 3 fails in layer 0 of the first chunk, 11 in a later
  // layer (earlier layers have updated their recurrent states), 40 in the
  // second chunk (after the first one advanced n_past).
  for (int fail_at : {3, 11, 40}) {
    for (bool user_checkpoint : {false, true}) {
      INFO("fail at " << fail_at << " user checkpoint " << user_checkpoint);
      ContextParams cp;
      cp.n_ctx = 128;
      cp.n_batch = 4;
      auto failing_owned = std::make_unique<FailingExperts>(model->resident_experts());
      FailingExperts* failing = failing_owned.get();  // owned by the context below
      auto made = Context::create(*model, cp, std::move(failing_owned));
      REQUIRE(made.ok());
      auto ctx = std::move(made).value();
      REQUIRE(ctx->decode(std::span<const int32_t>(toks.data(), 12)).ok());
      if (user_checkpoint) REQUIRE(ctx->checkpoint(16).ok());
      REQUIRE(ctx->decode(std::span<const int32_t>(toks.data() + 12, 4)).ok());
      failing->arm(fail_at);
      Status st = ctx->decode(std::span<const int32_t>(toks.data() + 16, 8));
      REQUIRE_FALSE(st.ok());
      CHECK(st.message().find("injected read error") != std::string::npos);
      CHECK(ctx->n_past() == 16);
      CHECK(ctx->sequence().has_checkpoint() == user_checkpoint);
      failing->disarm();
      REQUIRE(ctx->decode(std::span<const int32_t>(toks.data() + 16, 8)).ok());
      const auto got = one_by_one(*ctx, toks, 24, 27);
      for (size_t i = 0; i < got.size(); ++i) CHECK(same(got[i], want[i]));
    }
  }
}
