// RoPE scaling keys and non-F32 routers, computed as llama.cpp 81ff7abe does
// (docs/metadata.md): copies of the trained qwen3moe fixture with
// rope.scaling.* keys set (YaRN, YaRN with rope.scaling.attn_factor, linear)
// or with F16 / BF16 / Q8_0 routers give llama.cpp's greedy text on every
// prompt, and the YaRN and linear copies its log-probabilities at the scored
// positions of a perplexity chunk (within the 16-bit coding of
// llama-perplexity's file plus F16 model noise). Scaling changes the text, so
// a scaling that were ignored would fail.
//
// References: data/rope_scaling_refs.json, written by
// data/gen_rope_scaling_refs.py (llama-completion and llama-perplexity on the
// very files the hidden test case "[.write_variants]" writes).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/generate.h"
#include "core/model/context.h"
#include "core/model/model.h"
#include "core/sampler.h"
#include "support/fixtures.h"
#include "support/gguf_copy.h"

using namespace les;
using gguf::Value;
using gguf::ValueType;

namespace {

constexpr const char* kSource = "trained/tiny-qwen3moe-F16.gguf";

struct Variant {
  const char* name;
  test::GgufEdit edit;
};

Value str(const char* s) { return Value::from_string(s); }
Value f32(double v) { return Value::from_float(ValueType::FLOAT32, v); }
Value u32(uint64_t v) { return Value::from_uint(ValueType::UINT32, v); }

std::vector<Variant> variants() {
  std::vector<Variant> v;
  v.push_back({"yarn",
               {{{"qwen3moe.rope.scaling.type", str("yarn")},
                 {"qwen3moe.rope.scaling.factor", f32(4.0)},
                 {"qwen3moe.rope.scaling.original_context_length", u32(256)}},
                {},
                "",
                GgmlType::F32}});
  v.push_back({"yarn_attn_factor",
               {{{"qwen3moe.rope.scaling.type", str("yarn")},
                 {"qwen3moe.rope.scaling.factor", f32(8.0)},
                 {"qwen3moe.rope.scaling.original_context_length", u32(512)},
                 {"qwen3moe.rope.scaling.attn_factor", f32(0.9)}},
                {},
                "",
                GgmlType::F32}});
  // Factor 4: with factor 2 a layer-5 router decision at position 58 of the
  // perplexity chunk is a near-tie (k-th vs (k+1)-th probability 5e-4 apart,
  // relative) that llama.cpp's AVX2 build resolves the other way, and the
  // log-probabilities from there on differ by up to 0.06.
  v.push_back({"linear",
               {{{"qwen3moe.rope.scaling.type", str("linear")}, {"qwen3moe.rope.scaling.factor", f32(4.0)}},
                {},
                "",
                GgmlType::F32}});
  for (auto [name, t] : {std::pair{"router_f16", GgmlType::F16}, std::pair{"router_bf16", GgmlType::BF16},
                         std::pair{"router_q8_0", GgmlType::Q8_0}})
    v.push_back({name, {{}, {}, R"(blk\.\d+\.ffn_gate_inp\.weight)", t}});
  return v;
}

nlohmann::json load_refs() {
  std::ifstream f(std::string(LES_TESTS_SOURCE_DIR) + "/core/model/data/rope_scaling_refs.json");
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

// The variant written next to the other temporary files (once per process).
std::string variant_path(const std::string& src, const Variant& v) {
  static std::map<std::string, std::string> written;
  auto it = written.find(v.name);
  if (it != written.end()) return it->second;
  const std::string p = test::temp_dir() + "/" + v.name + ".gguf";
  test::copy_gguf_edited(src, p, v.edit);
  return written[v.name] = p;
}

std::string greedy_text(const Model& m, const std::string& prompt, int32_t n_predict) {
  ContextParams cp;
  cp.n_ctx = 256;
  auto ctx = Context::create(m, cp);
  REQUIRE(ctx.ok());
  SamplerParams sp;
  sp.temperature = 0.0f;
  auto s = Sampler::create(sp);
  REQUIRE(s.ok());
  GenerateParams gp;
  gp.n_predict = n_predict;
  auto st = generate(**ctx, m.tokenizer(), *s, prompt, gp, [](std::string_view) { return true; });
  REQUIRE(st.ok());
  // What llama-completion prints: each generated token's piece (special tokens
  // not rendered), the first one's leading space kept.
  std::string text;
  for (int32_t id : st->tokens) {
    auto piece = m.tokenizer().token_to_piece(id);
    REQUIRE(piece.ok());
    text += *piece;
  }
  return text;
}

// Log-softmax of one logit row (double sums).
std::vector<double> log_softmax(std::span<const float> l) {
  double mx = l[0];
  for (float x : l) mx = std::max(mx, static_cast<double>(x));
  double sum = 0;
  for (float x : l) sum += std::exp(static_cast<double>(x) - mx);
  const double lse = mx + std::log(sum);
  std::vector<double> out(l.size());
  for (size_t i = 0; i < l.size(); ++i) out[i] = l[i] - lse;
  return out;
}

}  // namespace

TEST_CASE("write the rope-scaling and router variants for llama.cpp", "[.write_variants]") {
  LES_REQUIRE_FIXTURE(src, kSource);
  const char* out = std::getenv("LES_VARIANTS_OUT");
  REQUIRE(out != nullptr);
  for (const Variant& v : variants()) test::copy_gguf_edited(src, std::string(out) + "/" + v.name + ".gguf", v.edit);
}

TEST_CASE("rope scaling and non-F32 routers: greedy text equals llama.cpp's", "[golden][rope]") {
  LES_REQUIRE_FIXTURE(src, kSource);
  const nlohmann::json refs = load_refs();
  const int32_t n_predict = refs["n_predict"].get<int32_t>();
  const auto prompts = refs["prompts"].get<std::vector<std::string>>();
  const auto base = refs["base_greedy"].get<std::vector<std::string>>();
  for (const Variant& v : variants()) {
    DYNAMIC_SECTION(v.name) {
      REQUIRE(refs["variants"].contains(v.name));
      const auto want = refs["variants"][v.name]["greedy"].get<std::vector<std::string>>();
      REQUIRE(want.size() == prompts.size());
      auto m = Model::load(variant_path(src, v), {});
      INFO(m.status().to_string());
      REQUIRE(m.ok());
      int differs_from_base = 0;
      for (size_t i = 0; i < prompts.size(); ++i) {
        const std::string got = greedy_text(**m, prompts[i], n_predict);
        INFO("prompt " << i << ": " << prompts[i]);
        CHECK(got == want[i]);
        differs_from_base += want[i] != base[i];
      }
      // Scaling changes the text (a test that could not tell an ignored key otherwise).
      if (std::string(v.name).rfind("router", 0) != 0) CHECK(differs_from_base > 0);
    }
  }
}

TEST_CASE("rope scaling: log-probabilities at llama-perplexity's scored positions equal llama.cpp's",
          "[golden][rope]") {
  LES_REQUIRE_FIXTURE(src, kSource);
  const nlohmann::json refs = load_refs();
  for (const Variant& v : variants()) {
    if (!refs["variants"][v.name].contains("logprobs")) continue;
    DYNAMIC_SECTION(v.name) {
      const auto& lp = refs["variants"][v.name]["logprobs"];
      const auto tokens = lp["tokens"].get<std::vector<int32_t>>();
      const int32_t first = lp["first_position"].get<int32_t>();
      auto m = Model::load(variant_path(src, v), {});
      REQUIRE(m.ok());
      ContextParams cp;
      cp.n_ctx = static_cast<int32_t>(tokens.size());
      auto ctx = Context::create(**m, cp);
      REQUIRE(ctx.ok());
      REQUIRE((*ctx)->decode(tokens, /*all_logits=*/true).ok());
      const auto all = (*ctx)->logits_all();
      const int64_t nv = (*m)->hparams().n_vocab;
      double worst = 0;
      int top1_agree = 0, n_pos = 0;
      for (const auto& pos : lp["top"]) {
        const int32_t p = first + n_pos++;
        const std::vector<double> ours = log_softmax(all.subspan(static_cast<size_t>(p) * nv, nv));
        int32_t am = 0;
        for (int32_t i = 1; i < nv; ++i) am = ours[i] > ours[am] ? i : am;
        top1_agree += am == pos[0][0].get<int32_t>();
        for (const auto& e : pos) worst = std::max(worst, std::fabs(ours[e[0].get<int32_t>()] - e[1].get<double>()));
      }
      INFO(v.name << ": " << n_pos << " positions, max |log p - llama.cpp| " << worst << ", top-1 agrees "
                  << top1_agree);
      // 16-bit coding of llama-perplexity's file (<= 1.3e-4) plus F16 model noise (the golden F16 bound, 1e-2).
      CHECK(worst <= 1e-2);
      CHECK(top1_agree == n_pos);
    }
  }
}
