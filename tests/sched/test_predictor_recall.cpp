// Lookahead predictor recall on the trained F16 fixture, measured as its
// README's routing statistics were: the first 2048 tokens of
// corpus/validation.txt in 8 chunks of 256 (first token replaced by BOS), each
// chunk from an empty context, predictor A = top-c of router_{l+1} · u_l.
// Prints the per-layer table next to the README's figures and checks the means.
// Also prints (and checks the direction of) cache hit rates per eviction
// policy and layer-0 predictor, decoding token by token; and compares
// predictor A with the next-layer-norm variant the scheduler uses by default.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "synth/synth_model.h"
#include "sched/context_factory.h"
#include "sched_test_util.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::sched;

namespace {

// StreamingParams with only the budget set (the rest at their defaults).
StreamingParams budget_only(size_t bytes) {
  StreamingParams sp;
  sp.budget_bytes = bytes;
  return sp;
}

// README table "Routing statistics", predictor A, rows l -> l+1 for l = 0..6.
constexpr double kReadmeA[3][7] = {
    {0.355, 0.749, 0.815, 0.749, 0.804, 0.826, 0.846},  // c = k
    {0.447, 0.875, 0.921, 0.874, 0.921, 0.945, 0.952},  // c = k + 2
    {0.534, 0.925, 0.960, 0.932, 0.964, 0.981, 0.982},  // c = 2k
};
constexpr double kReadmeMean[3] = {0.735, 0.848, 0.897};

std::vector<int32_t> validation_tokens(const Model& m, size_t n) {
  const std::string path = test::fixture_path("corpus/validation.txt");
  if (path.empty()) return {};
  std::ifstream f(path, std::ios::binary);
  std::string text(64 * 1024, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(f.gcount()));
  auto ids = m.tokenizer().tokenize(text, /*add_special=*/true, /*parse_special=*/false);
  REQUIRE(ids.ok());
  REQUIRE(ids->size() > n + 16);  // the cut at 64 KiB only affects the tail
  ids->resize(n);
  return *ids;
}

struct Streamed {
  Streamed() = default;
  Streamed(Streamed&&) = default;
  ~Streamed() { ctx.reset(); }  // the context borrows the model: freed first, explicitly
  std::unique_ptr<Model> model;
  std::unique_ptr<Context> ctx;
  StreamingExpertSource* src = nullptr;  // ctx's own (sched::streaming_source)
};

ContextParams streamed_context_params() {
  ContextParams cp;
  cp.n_ctx = 256;
  cp.n_batch = 256;
  return cp;
}

Streamed open_streamed(const std::string& path, const StreamingParams& sp) {
  Streamed s;
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  s.model = std::move(m).value();
  auto ctx = create_context(*s.model, streamed_context_params(), sp);
  REQUIRE(ctx.ok());
  s.ctx = std::move(ctx).value();
  s.src = streaming_source(*s.ctx);
  REQUIRE(s.src != nullptr);
  return s;
}

}  // namespace

TEST_CASE("predictor recall on the trained F16 model matches the README (2048 validation tokens)", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(text, "corpus/validation.txt");
  const int32_t k = 4;
  double table[3][8] = {};
  double means[3] = {};
  const int32_t cs[3] = {k, k + 2, 2 * k};
  for (int ci = 0; ci < 3; ++ci) {
    StreamingParams sp;
    sp.prefetch_c = cs[ci];
    sp.budget_bytes = size_t{256} << 20;  // everything fits: recall does not depend on the budget
    sp.predictor_next_norm = false;       // the README's predictor A: router_{l+1} · u_l
    Streamed s = open_streamed(path, sp);
    const std::vector<int32_t> toks = validation_tokens(*s.model, 2048);
    for (int chunk = 0; chunk < 8; ++chunk) {
      std::vector<int32_t> c(toks.begin() + chunk * 256, toks.begin() + (chunk + 1) * 256);
      c[0] = 1;  // BOS
      s.ctx->reset();
      REQUIRE(s.ctx->decode(c, /*all_logits=*/true).ok());  // all rows reach the last layer
    }
    const SchedStats& st = s.src->stats();
    for (int l = 1; l < 8; ++l) table[ci][l] = st.layers[static_cast<size_t>(l)].recall();
    means[ci] = st.mean_recall(1);
    CHECK(st.layers[1].pred_actual == 2048u * k);
  }
  std::printf("\npredictor A recall, trained F16, 8 x 256 validation tokens (LES | README)\n");
  std::printf("l -> l+1 |   c=k           |   c=k+2         |   c=2k\n");
  for (int l = 0; l < 7; ++l)
    std::printf("%d -> %d   | %.3f | %.3f   | %.3f | %.3f   | %.3f | %.3f\n", l, l + 1, table[0][l + 1],
                kReadmeA[0][l], table[1][l + 1], kReadmeA[1][l], table[2][l + 1], kReadmeA[2][l]);
  std::printf("mean     | %.3f | %.3f   | %.3f | %.3f   | %.3f | %.3f\n", means[0], kReadmeMean[0], means[1],
              kReadmeMean[1], means[2], kReadmeMean[2]);
  for (int ci = 0; ci < 3; ++ci) {
    CHECK(std::abs(means[ci] - kReadmeMean[ci]) < 0.01);
    for (int l = 0; l < 7; ++l) CHECK(std::abs(table[ci][l + 1] - kReadmeA[ci][l]) < 0.03);
  }
}

TEST_CASE("eviction policies and layer-0 predictors, token-by-token decode (trained F16)", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(text, "corpus/validation.txt");
  const int n_tokens = 128;
  auto run = [&](EvictionPolicy policy, int32_t c, Layer0Lookahead l0, size_t slots) {
    StreamingParams sp;
    sp.prefetch_c = c;
    sp.policy = policy;
    sp.layer0 = l0;
    sp.io = io::IoBackendKind::pread;
    Streamed probe = open_streamed(path, budget_only(size_t{256} << 20));
    auto min = min_expert_budget_bytes(*probe.model, streamed_context_params(), sp);
    REQUIRE(min.ok());
    sp.budget_bytes = *min + (slots - 4) * probe.src->layout().slot_bytes();
    Streamed s = open_streamed(path, sp);
    const std::vector<int32_t> toks = validation_tokens(*s.model, n_tokens);
    for (int t = 0; t < n_tokens; ++t) REQUIRE(s.ctx->decode(std::span<const int32_t>(&toks[t], 1)).ok());
    return s.src->stats();
  };
  std::printf("\ncache hit rate, trained F16, %d tokens decoded one by one (256 experts in total)\n", n_tokens);
  std::printf("slots | c   | policy   | hit rate | misses/token | layer-0 recall (embeddings)\n");
  for (size_t slots : {32, 96}) {
    SchedStats base = run(EvictionPolicy::lru, 0, Layer0Lookahead::none, slots);
    std::printf("%5zu | off | lru      | %.3f    | %.2f\n", slots, base.hit_rate(),
                static_cast<double>(base.misses()) / n_tokens);
    for (EvictionPolicy p : {EvictionPolicy::lru, EvictionPolicy::lfu_aged}) {
      SchedStats st = run(p, 6, Layer0Lookahead::embeddings, slots);
      std::printf("%5zu | 6   | %-8s | %.3f    | %.2f         | %.3f\n", slots, eviction_policy_name(p),
                  st.hit_rate(), static_cast<double>(st.misses()) / n_tokens, st.layers[0].recall());
      CHECK(st.hit_rate() > base.hit_rate());  // lookahead must beat on-demand
    }
  }
  SchedStats emb = run(EvictionPolicy::lfu_aged, 6, Layer0Lookahead::embeddings, 96);
  SchedStats fin = run(EvictionPolicy::lfu_aged, 6, Layer0Lookahead::final_hidden, 96);
  std::printf("layer-0 recall at c = k+2: from the final hidden state %.3f, from the token embedding %.3f\n",
              fin.layers[0].recall(), emb.layers[0].recall());
  CHECK(fin.layers[0].pred_actual > 0);
  CHECK(emb.layers[0].pred_actual > 0);
}

TEST_CASE("next-layer-norm lookahead: same recall on the trained model, higher where norms differ", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(text, "corpus/validation.txt");
  // Mean recall (layers 1..L-1) at c = k of one 256-token chunk decoded as a
  // batch with every row reaching the last layer.
  auto recall = [](const std::string& model_path, bool next_norm, const std::vector<int32_t>* toks_in) {
    StreamingParams sp;
    sp.prefetch_c = 0;  // resolved below to k
    Streamed probe = open_streamed(model_path, budget_only(size_t{64} << 20));
    sp.prefetch_c = probe.model->hparams().n_expert_used;
    sp.budget_bytes = size_t{64} << 20;
    sp.predictor_next_norm = next_norm;
    Streamed s = open_streamed(model_path, sp);
    std::vector<int32_t> toks;
    if (toks_in) {
      toks = *toks_in;
    } else {
      for (int i = 0; i < 128; ++i) toks.push_back((7919 * i + 13) % s.model->hparams().n_vocab);
    }
    REQUIRE(s.ctx->decode(toks, /*all_logits=*/true).ok());
    return s.src->stats().mean_recall(1);
  };
  Streamed probe = open_streamed(path, budget_only(size_t{64} << 20));
  std::vector<int32_t> toks = validation_tokens(*probe.model, 256);
  toks[0] = 1;
  const double trained_a = recall(path, false, &toks), trained_n = recall(path, true, &toks);
  // A synthetic model whose ffn_norm weights differ from layer to layer.
  const std::string synth = test::temp_dir() + "/recall-synth-small.gguf";
  auto preset = synth_preset("small");
  REQUIRE(preset.ok());
  REQUIRE(write_synth_model(*preset, SynthOptions{}, synth).ok());
  const double synth_a = recall(synth, false, nullptr), synth_n = recall(synth, true, nullptr);
  std::printf("\nlookahead recall at c = k, predictor A vs next-layer norm: trained F16 %.3f vs %.3f, "
              "synth small %.3f vs %.3f\n", trained_a, trained_n, synth_a, synth_n);
  CHECK(trained_n >= trained_a - 0.01);
  CHECK(synth_n > synth_a + 0.02);
}
