// Model loading, Context bad-input handling and MoE variants on tiny models
// written in memory with the GGUF writer (F32 weights, so every matmul is exact
// up to float rounding and a plain double-precision reference is a fair oracle).
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/model/context.h"
#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "core/model/model.h"
#include "core/model/moe_layer.h"
#include "support/tiny_model.h"

using namespace les;

namespace {

using test::build_tiny_model;
using test::randn;
using test::TinyModel;
using test::TinySpec;

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

}  // namespace

TEST_CASE("model load refuses bad files with a message naming the problem", "[model]") {
  SECTION("unknown architecture") {
    TinySpec s;
    s.arch = "gpt-x";
    TinyModel tm = build_tiny_model(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::unsupported);
    CHECK(contains(tm.status.message(), "gpt-x"));
  }
  SECTION("missing tensor") {
    TinySpec s;
    s.drop_tensor = "blk.0.attn_k.weight";
    TinyModel tm = build_tiny_model(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::format);
    CHECK(contains(tm.status.message(), "blk.0.attn_k.weight"));
  }
  SECTION("wrong shape") {
    TinySpec s;
    s.bad_shape_tensor = "blk.0.ffn_down_exps.weight";
    TinyModel tm = build_tiny_model(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::format);
    CHECK(contains(tm.status.message(), "blk.0.ffn_down_exps.weight"));
  }
  SECTION("unsupported type for a norm") {
    TinySpec s;
    s.f16_norm_tensor = "blk.0.ffn_norm.weight";
    TinyModel tm = build_tiny_model(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::unsupported);
    CHECK(contains(tm.status.message(), "blk.0.ffn_norm.weight"));
  }
  SECTION("invalid metadata") {
    TinySpec s;
    s.extra_u32["expert_gating_func"] = 7;
    TinyModel tm = build_tiny_model(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::format);
    CHECK(contains(tm.status.message(), "expert_gating_func"));
  }
}

TEST_CASE("context rejects bad tokens and a full context without changing state", "[context]") {
  TinyModel tm = build_tiny_model(TinySpec{});
  REQUIRE(tm.model);
  ContextParams cp;
  cp.n_ctx = 4;
  auto ctx = Context::create(*tm.model, cp);
  REQUIRE(ctx.ok());
  Context& c = **ctx;
  const std::vector<int32_t> three{1, 2, 3};
  REQUIRE(c.decode(three).ok());
  const std::vector<float> before(c.logits().begin(), c.logits().end());

  const std::vector<int32_t> bad{5, 16};
  Status s = c.decode(bad);
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK(contains(s.message(), "16"));
  const std::vector<int32_t> neg{-1};
  CHECK(c.decode(neg).code() == StatusCode::invalid_argument);
  CHECK(c.decode(std::span<const int32_t>()).code() == StatusCode::invalid_argument);
  const std::vector<int32_t> two{4, 5};
  CHECK(c.decode(two).code() == StatusCode::context_full);
  CHECK(c.n_past() == 3);
  CHECK(std::vector<float>(c.logits().begin(), c.logits().end()) == before);
  const std::vector<int32_t> one{4};
  CHECK(c.decode(one).ok());
  CHECK(c.n_past() == 4);
  CHECK(c.trim(5).code() == StatusCode::invalid_argument);
}

TEST_CASE("batched prefill, token-by-token decode and trim agree", "[context]") {
  TinyModel tm = build_tiny_model(TinySpec{});
  REQUIRE(tm.model);
  const std::vector<int32_t> toks{1, 7, 3, 9, 12};
  auto a = Context::create(*tm.model, {});
  auto b = Context::create(*tm.model, {});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE((*a)->decode(toks, /*all_logits=*/true).ok());
  const int nv = tm.model->hparams().n_vocab;
  for (size_t i = 0; i < toks.size(); ++i) {
    REQUIRE((*b)->decode(std::span<const int32_t>(&toks[i], 1)).ok());
    for (int j = 0; j < nv; ++j) CHECK((*b)->logits()[j] == Approx((*a)->logits_all()[i * nv + j]).margin(1e-4));
  }
  // rollback: decode a wrong token, trim it away, decode the right one
  auto c = Context::create(*tm.model, {});
  REQUIRE(c.ok());
  REQUIRE((*c)->decode(std::span<const int32_t>(toks.data(), 4)).ok());
  const std::vector<int32_t> wrong{2};
  REQUIRE((*c)->decode(wrong).ok());
  REQUIRE((*c)->trim(4).ok());
  REQUIRE((*c)->decode(std::span<const int32_t>(&toks[4], 1)).ok());
  for (int j = 0; j < nv; ++j) CHECK((*c)->logits()[j] == Approx((*a)->logits()[j]).margin(1e-4));
  // small n_batch: prefill split in chunks gives the same logits
  ContextParams cp;
  cp.n_batch = 2;
  auto d = Context::create(*tm.model, cp);
  REQUIRE(d.ok());
  REQUIRE((*d)->decode(toks).ok());
  for (int j = 0; j < nv; ++j) CHECK((*d)->logits()[j] == Approx((*a)->logits()[j]).margin(1e-4));
}

namespace {

// Plain MoE FFN in double: the semantics of moe_layer.h written out directly.
std::vector<double> reference_moe(const Model& m, const std::vector<float>& h, bool sigmoid, bool renorm,
                                  double scale, std::vector<std::set<int>>* chosen) {
  const Hparams& hp = m.hparams();
  const LayerWeights& l = m.weights().layers[0];
  const int E = hp.n_embd, NE = hp.n_expert, K = hp.n_expert_used, F = hp.n_ff_exp;
  const int n = static_cast<int>(h.size()) / E;
  auto f = [](const WeightView& w, size_t i) { return static_cast<double>(reinterpret_cast<const float*>(w.data)[i]); };
  std::vector<double> out(h.size(), 0.0);
  for (int t = 0; t < n; ++t) {
    std::vector<double> p(NE);
    for (int e = 0; e < NE; ++e) {
      double acc = 0;
      for (int c = 0; c < E; ++c) acc += f(l.router, static_cast<size_t>(e * E + c)) * h[t * E + c];
      p[e] = acc;
    }
    if (sigmoid) {
      for (double& x : p) x = 1.0 / (1.0 + std::exp(-x));
    } else {
      const double mx = *std::max_element(p.begin(), p.end());
      double sum = 0;
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (double& x : p) x /= sum;
    }
    std::vector<int> idx(NE);
    for (int e = 0; e < NE; ++e) idx[e] = e;
    auto score = [&](int e) { return p[e] + (l.exp_probs_b.present() ? f(l.exp_probs_b, e) : 0.0); };
    std::sort(idx.begin(), idx.end(), [&](int x, int y) { return score(x) > score(y); });
    double wsum = 0;
    for (int j = 0; j < K; ++j) wsum += p[idx[j]];
    chosen->emplace_back(idx.begin(), idx.begin() + K);
    for (int j = 0; j < K; ++j) {
      const int e = idx[j];
      double w = p[e];
      if (renorm) w /= wsum;
      if (scale != 0) w *= scale;
      std::vector<double> act(F);
      for (int r = 0; r < F; ++r) {
        double g = 0, u = 0;
        for (int c = 0; c < E; ++c) {
          const size_t o = static_cast<size_t>(e) * F * E + static_cast<size_t>(r) * E + c;
          g += f(l.gate_exps, o) * h[t * E + c];
          u += f(l.up_exps, o) * h[t * E + c];
        }
        act[r] = g / (1.0 + std::exp(-g)) * u;
      }
      for (int r = 0; r < E; ++r) {
        double d = 0;
        for (int c = 0; c < F; ++c) d += f(l.down_exps, static_cast<size_t>(e) * E * F + static_cast<size_t>(r) * F + c) * act[c];
        out[t * E + r] += w * d;
      }
    }
  }
  return out;
}

void check_moe_variant(const TinySpec& spec, bool sigmoid, bool renorm, double scale) {
  TinyModel tm = build_tiny_model(spec);
  INFO(tm.status.to_string());
  REQUIRE(tm.model);
  const Model& m = *tm.model;
  const int E = m.hparams().n_embd, n = 6;
  std::mt19937 rng(99);
  const std::vector<float> h = randn(static_cast<size_t>(n * E), 1.0f, rng);
  std::vector<float> out(h.size());
  FfnScratch fs;
  MatmulScratch ms;
  std::vector<std::set<int>> ours;
  ForwardObservers obs;
  obs.router = [&](const RouterObservation& o) {
    for (int t = 0; t < o.n_tokens; ++t)
      ours.emplace_back(o.selected + t * o.n_expert_used, o.selected + (t + 1) * o.n_expert_used);
  };
  REQUIRE(ffn_forward(m, 0, m.resident_experts(), h.data(), n, 0, out.data(), fs, ms, &obs).ok());
  std::vector<std::set<int>> theirs;
  const std::vector<double> ref = reference_moe(m, h, sigmoid, renorm, scale, &theirs);
  CHECK(ours == theirs);
  for (size_t i = 0; i < out.size(); ++i) CHECK(out[i] == Approx(ref[i]).margin(1e-4));
}

}  // namespace

TEST_CASE("MoE variants of the shared layers (set on the model, no file selects them): gating, renormalisation, scale, selection bias", "[moe]") {
  SECTION("softmax, renormalised (qwen3moe default)") { check_moe_variant(TinySpec{}, false, true, 0); }
  SECTION("sigmoid gating") {
    TinySpec s;
    s.gating = ExpertGating::sigmoid;
    check_moe_variant(s, true, true, 0);
  }
  SECTION("no renormalisation") {
    TinySpec s;
    s.renorm = false;
    check_moe_variant(s, false, false, 0);
  }
  SECTION("weights scale") {
    TinySpec s;
    s.weights_scale = 2.5f;
    check_moe_variant(s, false, true, 2.5);
  }
  SECTION("softmax with selection bias (the bias picks, the probabilities weigh)") {
    TinySpec s;
    s.exp_probs_b = true;
    check_moe_variant(s, false, true, 0);
  }
  SECTION("sigmoid with selection bias, no renorm, scaled") {
    TinySpec s;
    s.gating = ExpertGating::sigmoid;
    s.renorm = false;
    s.weights_scale = 1.5f;
    s.exp_probs_b = true;
    check_moe_variant(s, true, false, 1.5);
  }
}
