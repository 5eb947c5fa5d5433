// Metadata that changes the math is computed or refused, never ignored
// (docs/metadata.md, core/model/metadata_policy.h): every refused key is
// named with its value, a value that changes nothing is accepted, and a file
// with several problems gets every reason in one status.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "support/tiny_model.h"

using namespace les;
using test::build_tiny_model;
using test::TinyModel;
using test::TinySpec;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

// The spec's model is refused (unsupported) and the message names every needle.
void check_refused(const TinySpec& s, std::initializer_list<const char*> needles) {
  TinyModel tm = build_tiny_model(s);
  INFO(tm.status.to_string());
  REQUIRE(tm.model == nullptr);
  CHECK(tm.status.code() == StatusCode::unsupported);
  for (const char* n : needles) CHECK(contains(tm.status.message(), n));
}

void check_loads(const TinySpec& s) {
  TinyModel tm = build_tiny_model(s);
  INFO(tm.status.to_string());
  CHECK(tm.model != nullptr);
}

}  // namespace

TEST_CASE("metadata llama.cpp does not read for qwen3moe is refused unless it says what llama.cpp assumes",
          "[metadata]") {
  SECTION("gating function") {
    TinySpec s;
    s.extra_u32["expert_gating_func"] = 2;
    check_refused(s, {"qwen3moe.expert_gating_func' = 2", "softmax"});
    s.extra_u32["expert_gating_func"] = 1;
    check_loads(s);
  }
  SECTION("weight normalisation") {
    TinySpec s;
    s.extra_bool["expert_weights_norm"] = false;
    check_refused(s, {"qwen3moe.expert_weights_norm' = false", "renormalised"});
    s.extra_bool["expert_weights_norm"] = true;
    check_loads(s);
  }
  SECTION("weight scale") {
    TinySpec s;
    s.extra_f32["expert_weights_scale"] = 2.5;
    check_refused(s, {"qwen3moe.expert_weights_scale' = 2.5"});
    s.extra_f32["expert_weights_scale"] = 1.0;
    check_loads(s);
  }
  SECTION("attention scale") {
    TinySpec s;  // head_dim 16: llama.cpp's scale is 0.25
    s.extra_f32["attention.scale"] = 0.1;
    check_refused(s, {"qwen3moe.attention.scale' = 0.1", "0.25"});
    s.extra_f32["attention.scale"] = 0.25;
    check_loads(s);
  }
  SECTION("softcapping, sliding window, YaRN log multiplier, NTK alpha") {
    for (const char* k : {"final_logit_softcapping", "attn_logit_softcapping", "router_logit_softcapping",
                          "rope.scaling.yarn_log_multiplier", "rope.scaling.alpha"}) {
      DYNAMIC_SECTION(k) {
        TinySpec s;
        s.extra_f32[k] = 30.0;
        check_refused(s, {k, "= 30"});
        s.extra_f32[k] = 0.0;
        check_loads(s);
      }
    }
    TinySpec s;
    s.extra_u32["attention.sliding_window"] = 4096;
    check_refused(s, {"qwen3moe.attention.sliding_window' = 4096"});
  }
  SECTION("MTP blocks outside qwen35moe") {
    TinySpec s;
    s.extra_u32["nextn_predict_layers"] = 1;
    s.n_layer = 2;
    check_refused(s, {"qwen3moe.nextn_predict_layers' = 1"});
  }
}

TEST_CASE("metadata llama.cpp computes but LES does not is refused by name", "[metadata]") {
  TinySpec s;
  s.extra_bool["attention.causal"] = false;
  check_refused(s, {"qwen3moe.attention.causal' = false", "non-causal"});
  TinySpec g;
  g.n_expert = 8;
  g.extra_u32["expert_group_count"] = 4;
  check_refused(g, {"qwen3moe.expert_group_count' = 4", "group-limited"});
  g.extra_u32["expert_group_count"] = 1;
  check_loads(g);
}

TEST_CASE("rope scaling: longrope and unknown types are refused with the value; none, linear, yarn load",
          "[metadata]") {
  TinySpec s;
  s.extra_str["rope.scaling.type"] = "longrope";
  check_refused(s, {"qwen3moe.rope.scaling.type' = \"longrope\""});
  s.extra_str["rope.scaling.type"] = "ntk";
  check_refused(s, {"qwen3moe.rope.scaling.type' = \"ntk\"", "none, linear, yarn"});
  for (const char* t : {"none", "linear", "yarn"}) {
    s.extra_str["rope.scaling.type"] = t;
    s.extra_f32["rope.scaling.factor"] = 4.0;
    TinyModel tm = build_tiny_model(s);
    INFO(t << ": " << tm.status.to_string());
    REQUIRE(tm.model != nullptr);
    const RopeConfig& r = tm.model->hparams().rope;
    CHECK(r.freq_scale == (std::string(t) == "none" ? 1.0f : 0.25f));
    CHECK(r.ext_factor == (std::string(t) == "yarn" ? 1.0f : 0.0f));
  }
}

TEST_CASE("YaRN keys llama.cpp does not read are refused unless they hold its defaults", "[metadata]") {
  TinySpec s;
  s.extra_str["rope.scaling.type"] = "yarn";
  s.extra_f32["rope.scaling.factor"] = 4.0;
  s.extra_f32["rope.scaling.yarn_beta_fast"] = 32.0;
  s.extra_f32["rope.scaling.yarn_beta_slow"] = 1.0;
  s.extra_f32["rope.scaling.yarn_attn_factor"] = 0.1 * std::log(4.0) + 1.0;
  check_loads(s);
  s.extra_f32["rope.scaling.yarn_beta_fast"] = 16.0;
  check_refused(s, {"qwen3moe.rope.scaling.yarn_beta_fast' = 16", "beta_fast 32"});
  s.extra_f32["rope.scaling.yarn_beta_fast"] = 32.0;
  s.extra_f32["rope.scaling.yarn_attn_factor"] = 1.0;
  check_refused(s, {"qwen3moe.rope.scaling.yarn_attn_factor' = 1"});
}

TEST_CASE("every reason at once: metadata, a tensor type without a kernel and an unused tensor", "[metadata]") {
  TinySpec s;
  s.extra_u32["expert_gating_func"] = 2;
  s.extra_f32["final_logit_softcapping"] = 30.0;
  s.f16_norm_tensor = "blk.0.ffn_norm.weight";
  TinyModel tm = build_tiny_model(s);
  INFO(tm.status.to_string());
  REQUIRE(tm.model == nullptr);
  CHECK(tm.status.code() == StatusCode::unsupported);
  const std::string& m = tm.status.message();
  CHECK(contains(m, "3 reasons"));
  CHECK(contains(m, "(1) "));
  CHECK(contains(m, "expert_gating_func' = 2"));
  CHECK(contains(m, "final_logit_softcapping' = 30"));
  CHECK(contains(m, "tensor 'blk.0.ffn_norm.weight' has type F16"));
}

TEST_CASE("ggml types 40-42 (NVFP4, Q1_0, Q2_0) are parsed and refused by name: no kernel", "[metadata]") {
  TinySpec s;
  s.n_embd = 128;  // a multiple of every block size (Q1_0: 128)
  s.raw_type["blk.0.ffn_gate_exps.weight"] = GgmlType::NVFP4;
  s.raw_type["blk.0.ffn_up_exps.weight"] = GgmlType::Q1_0;
  s.raw_type["blk.0.attn_q.weight"] = GgmlType::Q2_0;
  check_refused(s, {"3 reasons", "no kernel for NVFP4: 1 tensor (blk.0.ffn_gate_exps.weight)",
                    "no kernel for Q1_0: 1 tensor (blk.0.ffn_up_exps.weight)",
                    "no kernel for Q2_0: 1 tensor (blk.0.attn_q.weight)"});
  CHECK(ggml_type_traits(40u)->block_size == 64);
  CHECK(ggml_type_traits(40u)->block_bytes == 36);
  CHECK(ggml_type_traits(41u)->block_size == 128);
  CHECK(ggml_type_traits(41u)->block_bytes == 18);
  CHECK(ggml_type_traits(42u)->block_size == 64);
  CHECK(ggml_type_traits(42u)->block_bytes == 18);
  CHECK(!ggml_type_traits(43u).has_value());
}

TEST_CASE("routers and shared-expert gates in F16, BF16 and Q8_0 load; norms must be F32", "[metadata]") {
  for (GgmlType t : {GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0}) {
    DYNAMIC_SECTION(ggml_type_name(t)) {
      TinySpec s;
      s.raw_type["blk.0.ffn_gate_inp.weight"] = t;
      TinyModel tm = build_tiny_model(s);
      INFO(tm.status.to_string());
      REQUIRE(tm.model != nullptr);
      CHECK(tm.model->weights().layers[0].router.type == t);
    }
  }
  TinySpec s;
  s.raw_type["blk.0.attn_norm.weight"] = GgmlType::BF16;
  check_refused(s, {"tensor 'blk.0.attn_norm.weight' has type BF16", "F32 only"});
}
