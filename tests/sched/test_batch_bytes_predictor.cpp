// Predicted bytes of a batch (speculative decoding's draft length): each
// token's experts are the router's top-k on its normed embedding, layer by
// layer (checked against Router::route, another code path); a prefix's bytes
// are its distinct predicted experts not held, so the figure is
// non-decreasing, a repeated token adds nothing, held experts cost nothing;
// a bad token id is an error with zeros. Through a streaming source: a cold
// cache predicts bytes for a prompt, the pass reads (last_batch_io = the
// batch's stats), and once the experts are cached the prediction shrinks.
#include <catch2/catch.hpp>

#include <numeric>
#include <set>

#include "core/model/router.h"
#include "core/model/weight_matmul.h"
#include "kernels/ops.h"
#include "sched/batch_bytes_predictor.h"
#include "sched/context_factory.h"
#include "sched_test_util.h"
#include "support/fixtures.h"
#include "support/tiny_model.h"

using namespace les;
using namespace les::sched;

namespace {

// The router's top-k for `token` at `layer` on RMSNorm(embd)·ffn_norm_layer.
std::vector<int32_t> routed(const Model& m, int32_t layer, int32_t token) {
  const Hparams& hp = m.hparams();
  std::vector<float> x(static_cast<size_t>(hp.n_embd)), u(x.size());
  REQUIRE(dequantize_row(m.weights().tok_embd, token, x.data()).ok());
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(layer)];
  ops::rms_norm(x.data(), reinterpret_cast<const float*>(L.ffn_norm.data), hp.n_embd, hp.rms_eps, u.data());
  auto router = Router::of(m, layer);
  REQUIRE(router.ok());
  RouterOutput out;
  MatmulScratch ms;
  REQUIRE(router->route(u.data(), 1, out, ms).ok());
  return out.selected;
}

}  // namespace

TEST_CASE("batch bytes: the distinct predicted experts not held, per prefix", "[sched][speculative]") {
  test::TinySpec s;
  s.n_layer = 3;
  s.n_expert = 8;
  s.n_expert_used = 2;
  s.n_vocab = 16;
  test::TinyModel tm = test::build_tiny_model(s);
  INFO(tm.status.to_string());
  REQUIRE(tm.model);
  const Model& m = *tm.model;
  BatchBytesPredictor p(m);
  const auto bytes = [](int32_t layer) { return size_t{1000} * static_cast<size_t>(layer + 1); };
  const auto none = [](int32_t, int32_t) { return false; };
  const std::vector<int32_t> tokens = {5, 5, 9, 3, 9, 12};
  std::vector<uint64_t> out(tokens.size());
  REQUIRE(p.predict(tokens, none, bytes, out).ok());
  std::set<std::pair<int32_t, int32_t>> uni;
  for (size_t j = 0; j < tokens.size(); ++j) {
    uint64_t want = 0;
    for (int32_t l = 0; l < s.n_layer; ++l)
      for (int32_t e : routed(m, l, tokens[j])) uni.insert({l, e});
    for (const auto& [l, e] : uni) want += bytes(l);
    INFO("prefix " << j);
    CHECK(out[j] == want);
  }
  CHECK(out[0] == uint64_t{(1000 + 2000 + 3000) * 2});  // k distinct experts per layer
  CHECK(out[1] == out[0]);                              // the same token again
  CHECK(std::is_sorted(out.begin(), out.end()));

  // Held experts cost nothing; a layer held entirely drops out.
  const auto all = [](int32_t, int32_t) { return true; };
  REQUIRE(p.predict(tokens, all, bytes, out).ok());
  CHECK(out == std::vector<uint64_t>(tokens.size(), 0));
  const auto layer0 = [](int32_t l, int32_t) { return l == 0; };
  REQUIRE(p.predict(std::span<const int32_t>(tokens.data(), 1), layer0, bytes, out).ok());
  CHECK(out[0] == uint64_t{(2000 + 3000) * 2});

  // Out-of-range ids: an error naming the id, and zeros.
  for (int32_t bad : {-1, 16, 1 << 30}) {
    const std::vector<int32_t> t = {5, bad};
    std::fill(out.begin(), out.end(), 7);
    const Status st = p.predict(t, none, bytes, std::span<uint64_t>(out.data(), 2));
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find(std::to_string(bad)) != std::string::npos);
    CHECK(out[0] == 0);
    CHECK(out[1] == 0);
  }
}

TEST_CASE("streaming source: predicted batch bytes, the batch's reads, a warmer cache predicts less",
          "[sched][speculative]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  StreamingParams sp;
  sp.prefetch_c = 0;
  sp.io = io::IoBackendKind::pread;
  sp.budget_bytes = size_t{1} << 30;  // every expert fits
  ContextParams cp;
  cp.n_ctx = 64;
  auto ctx = create_context(**m, cp, sp);
  REQUIRE(ctx.ok());
  const StreamingExpertSource* src = streaming_source(**ctx);
  REQUIRE(src != nullptr);
  ExpertSource& es = (*ctx)->expert_source();
  const std::vector<int32_t> prompt = test::test_prompt((*m)->hparams().n_vocab, 8);
  std::vector<uint64_t> cold(prompt.size()), warm(prompt.size());
  es.predict_batch_bytes(prompt, cold);
  CHECK(cold[0] > 0);
  CHECK(std::is_sorted(cold.begin(), cold.end()));
  REQUIRE((*ctx)->decode(prompt).ok());
  const ExpertCost::BatchIo io = es.last_batch_io();
  CHECK(io.bytes_read > 0);
  CHECK(io.bytes_read == src->last_batch_stats().bytes_read);
  CHECK(io.io_wait_s == src->last_batch_stats().io_wait_s);
  es.predict_batch_bytes(prompt, warm);
  INFO("cold " << cold.back() << " warm " << warm.back());
  CHECK(warm.back() < cold.back());
  // A bad id predicts nothing rather than failing the step.
  const std::vector<int32_t> bad = {prompt[0], -3};
  std::vector<uint64_t> z(2, 9);
  es.predict_batch_bytes(bad, z);
  CHECK(z == std::vector<uint64_t>{0, 0});
}
