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

using namespace les;

namespace {

struct TinySpec {
  std::string arch = "qwen3moe";
  int n_layer = 1, n_embd = 32, n_head = 2, n_head_kv = 1, head_dim = 16, n_vocab = 16;
  int n_expert = 4, n_expert_used = 2, n_ff_exp = 8;
  std::map<std::string, double> extra_f32;     // extra float keys (suffix after "<arch>.")
  std::map<std::string, uint32_t> extra_u32;
  std::map<std::string, bool> extra_bool;
  bool exp_probs_b = false;
  std::string drop_tensor;                     // omit this tensor
  std::string bad_shape_tensor;                // write this tensor with ne0 + 1
  std::string f16_norm_tensor;                 // write this 1-D tensor as F16
};

struct TinyModel {
  std::vector<uint8_t> bytes;  // must outlive the model (GgufFile::parse)
  std::unique_ptr<Model> model;
  Status status;
};

std::vector<float> randn(size_t n, float scale, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TinyModel build(const TinySpec& s) {
  gguf::GgufWriter w;
  const std::string a = s.arch + ".";
  REQUIRE(w.set_string("general.architecture", s.arch).ok());
  REQUIRE(w.set_u32(a + "block_count", static_cast<uint32_t>(s.n_layer)).ok());
  REQUIRE(w.set_u32(a + "embedding_length", static_cast<uint32_t>(s.n_embd)).ok());
  REQUIRE(w.set_u32(a + "attention.head_count", static_cast<uint32_t>(s.n_head)).ok());
  REQUIRE(w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv)).ok());
  REQUIRE(w.set_u32(a + "attention.key_length", static_cast<uint32_t>(s.head_dim)).ok());
  REQUIRE(w.set_u32(a + "attention.value_length", static_cast<uint32_t>(s.head_dim)).ok());
  REQUIRE(w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-6f).ok());
  REQUIRE(w.set_f32(a + "rope.freq_base", 10000.0f).ok());
  REQUIRE(w.set_u32(a + "context_length", 64).ok());
  REQUIRE(w.set_u32(a + "expert_count", static_cast<uint32_t>(s.n_expert)).ok());
  REQUIRE(w.set_u32(a + "expert_used_count", static_cast<uint32_t>(s.n_expert_used)).ok());
  REQUIRE(w.set_u32(a + "expert_feed_forward_length", static_cast<uint32_t>(s.n_ff_exp)).ok());
  for (const auto& [k, v] : s.extra_f32) REQUIRE(w.set_f32(a + k, static_cast<float>(v)).ok());
  for (const auto& [k, v] : s.extra_u32) REQUIRE(w.set_u32(a + k, v).ok());
  for (const auto& [k, v] : s.extra_bool) REQUIRE(w.set_bool(a + k, v).ok());

  std::mt19937 rng(1234);
  auto add = [&](const std::string& name, std::vector<int64_t> ne, float scale, float offset = 0.0f) {
    if (name == s.drop_tensor) return;
    if (name == s.bad_shape_tensor) ne[0] += 1;
    size_t n = 1;
    for (int64_t x : ne) n *= static_cast<size_t>(x);
    std::vector<float> v = randn(n, scale, rng);
    for (float& x : v) x += offset;
    if (name == s.f16_norm_tensor) {
      std::vector<fp16_t> h(n);
      for (size_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(v[i]);
      REQUIRE(w.add_tensor(name, GgmlType::F16, ne, h.data(), n * 2).ok());
      return;
    }
    REQUIRE(w.add_tensor(name, GgmlType::F32, ne, v.data(), n * 4).ok());
  };
  const int64_t E = s.n_embd, Dq = s.n_head * s.head_dim, Dk = s.n_head_kv * s.head_dim;
  add("token_embd.weight", {E, s.n_vocab}, 0.5f);
  add("output_norm.weight", {E}, 0.1f, 1.0f);
  add("output.weight", {E, s.n_vocab}, 0.3f);
  for (int il = 0; il < s.n_layer; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    add(b + "attn_norm.weight", {E}, 0.1f, 1.0f);
    add(b + "attn_q.weight", {E, Dq}, 0.2f);
    add(b + "attn_k.weight", {E, Dk}, 0.2f);
    add(b + "attn_v.weight", {E, Dk}, 0.2f);
    add(b + "attn_output.weight", {Dq, E}, 0.2f);
    add(b + "attn_q_norm.weight", {s.head_dim}, 0.1f, 1.0f);
    add(b + "attn_k_norm.weight", {s.head_dim}, 0.1f, 1.0f);
    add(b + "ffn_norm.weight", {E}, 0.1f, 1.0f);
    add(b + "ffn_gate_inp.weight", {E, s.n_expert}, 0.4f);
    if (s.exp_probs_b) add(b + "exp_probs_b.bias", {s.n_expert}, 0.3f);
    add(b + "ffn_gate_exps.weight", {E, s.n_ff_exp, s.n_expert}, 0.2f);
    add(b + "ffn_up_exps.weight", {E, s.n_ff_exp, s.n_expert}, 0.2f);
    add(b + "ffn_down_exps.weight", {s.n_ff_exp, E, s.n_expert}, 0.2f);
  }
  TinyModel tm;
  tm.bytes = w.write_to_memory();
  auto f = gguf::GgufFile::parse(tm.bytes.data(), tm.bytes.size());
  REQUIRE(f.ok());
  auto m = Model::from_gguf(std::move(f).value(), {});
  if (m.ok()) tm.model = std::move(m).value(); else tm.status = m.status();
  return tm;
}

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

}  // namespace

TEST_CASE("model load refuses bad files with a message naming the problem", "[model]") {
  SECTION("unknown architecture") {
    TinySpec s;
    s.arch = "gpt-x";
    TinyModel tm = build(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::unsupported);
    CHECK(contains(tm.status.message(), "gpt-x"));
  }
  SECTION("missing tensor") {
    TinySpec s;
    s.drop_tensor = "blk.0.attn_k.weight";
    TinyModel tm = build(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::format);
    CHECK(contains(tm.status.message(), "blk.0.attn_k.weight"));
  }
  SECTION("wrong shape") {
    TinySpec s;
    s.bad_shape_tensor = "blk.0.ffn_down_exps.weight";
    TinyModel tm = build(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::format);
    CHECK(contains(tm.status.message(), "blk.0.ffn_down_exps.weight"));
  }
  SECTION("unsupported type for a norm") {
    TinySpec s;
    s.f16_norm_tensor = "blk.0.ffn_norm.weight";
    TinyModel tm = build(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::unsupported);
    CHECK(contains(tm.status.message(), "blk.0.ffn_norm.weight"));
  }
  SECTION("invalid metadata") {
    TinySpec s;
    s.extra_u32["expert_gating_func"] = 7;
    TinyModel tm = build(s);
    REQUIRE(tm.model == nullptr);
    CHECK(tm.status.code() == StatusCode::format);
    CHECK(contains(tm.status.message(), "expert_gating_func"));
  }
}

TEST_CASE("context rejects bad tokens and a full context without changing state", "[context]") {
  TinyModel tm = build(TinySpec{});
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
  TinyModel tm = build(TinySpec{});
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
  TinyModel tm = build(spec);
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

TEST_CASE("MoE variants follow the metadata: gating, renormalisation, scale, selection bias", "[moe]") {
  SECTION("softmax, renormalised (qwen3moe default)") { check_moe_variant(TinySpec{}, false, true, 0); }
  SECTION("sigmoid gating") {
    TinySpec s;
    s.extra_u32["expert_gating_func"] = 2;
    check_moe_variant(s, true, true, 0);
  }
  SECTION("no renormalisation") {
    TinySpec s;
    s.extra_bool["expert_weights_norm"] = false;
    check_moe_variant(s, false, false, 0);
  }
  SECTION("weights scale") {
    TinySpec s;
    s.extra_f32["expert_weights_scale"] = 2.5;
    check_moe_variant(s, false, true, 2.5);
  }
  SECTION("sigmoid with selection bias, no renorm, scaled") {
    TinySpec s;
    s.extra_u32["expert_gating_func"] = 2;
    s.extra_bool["expert_weights_norm"] = false;
    s.extra_f32["expert_weights_scale"] = 1.5;
    s.exp_probs_b = true;
    check_moe_variant(s, true, false, 1.5);
  }
}
