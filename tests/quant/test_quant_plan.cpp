// Per-tensor type choices (quant/quant_plan.h): on every fixture pair of an
// F16 model and the file llama-quantize made from it, the plan gives exactly
// the types llama-quantize wrote (presets, the more-bits layers, the
// fallbacks of 64-column expert rows); overrides win in the documented order.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gguf/gguf_reader.h"
#include "quant/quant_plan.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::quant;

namespace {

struct ModelShapes {
  std::vector<TensorShape> tensors;
  int n_layer = 0, n_expert = 0;
};

ModelShapes shapes_of(const std::string& path) {
  gguf::ReadOptions ro;
  ro.use_mmap = false;
  auto f = gguf::GgufFile::open(path, ro);
  REQUIRE(f.ok());
  ModelShapes m;
  const std::string arch = (*f)->architecture();
  m.n_layer = static_cast<int>(*(*f)->get_uint(arch + ".block_count"));
  m.n_expert = static_cast<int>((*f)->get_uint_or(arch + ".expert_count", 0).ok() ? *(*f)->get_uint_or(arch + ".expert_count", 0) : 0);
  for (const gguf::TensorInfo& t : (*f)->tensors()) {
    TensorShape s;
    s.name = t.name;
    s.type = t.type;
    s.n_dims = static_cast<int>(t.n_dims);
    for (int d = 0; d < 4; ++d) s.ne[d] = t.ne[static_cast<size_t>(d)];
    m.tensors.push_back(s);
  }
  return m;
}

// Every tensor of `reference` has the type the plan gives for `source`.
void check_plan_matches(const std::string& source_rel, const std::string& reference_rel, const PlanOptions& o) {
  LES_REQUIRE_FIXTURE(src, source_rel);
  LES_REQUIRE_FIXTURE(ref, reference_rel);
  const ModelShapes s = shapes_of(src);
  const ModelShapes r = shapes_of(ref);
  REQUIRE(s.tensors.size() == r.tensors.size());
  const auto plan = plan_types(s.tensors, o, s.n_layer, s.n_expert);
  int mismatches = 0;
  std::map<std::string, GgmlType> theirs;  // llama-quantize may write the tensors in another order
  for (const TensorShape& t : r.tensors) theirs[t.name] = t.type;
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto it = theirs.find(s.tensors[i].name);
    REQUIRE(it != theirs.end());
    if (plan[i].type != it->second) {
      ++mismatches;
      UNSCOPED_INFO(s.tensors[i].name << ": plan " << ggml_type_name(plan[i].type) << ", llama-quantize "
                                      << ggml_type_name(it->second));
    }
  }
  CHECK(mismatches == 0);
}

PlanOptions preset(Preset p) {
  PlanOptions o;
  o.preset = p;
  return o;
}

}  // namespace

TEST_CASE("plan: llama-quantize's presets on the fixtures", "[quant]") {
  check_plan_matches("trained/tiny-qwen3moe-F16.gguf", "trained/tiny-qwen3moe-Q4_K_M.gguf", preset(Preset::q4_k_m));
  check_plan_matches("synthetic/qwen3moe-F16.gguf", "synthetic/qwen3moe-Q4_K_M.gguf", preset(Preset::q4_k_m));
  check_plan_matches("synthetic/qwen3moe-F16.gguf", "synthetic/qwen3moe-Q3_K_M.gguf", preset(Preset::q3_k_m));
  check_plan_matches("synthetic/qwen3moe-F16.gguf", "synthetic/qwen3moe-Q8_0.gguf", preset(Preset::q8_0));
  check_plan_matches("synthetic/qwen35moe-F16.gguf", "synthetic/qwen35moe-Q4_K_M.gguf", preset(Preset::q4_k_m));
}

namespace {

// The types llama-quantize (81ff7abe) wrote for the trained F16 fixture with
// IQ4_XS (without and with trained/imatrix-train.gguf) and MXFP4_MOE, read off
// its output files (10-13 MB each, not shipped): `want(name)` per tensor.
void check_plan_types(const PlanOptions& o, bool has_imatrix, GgmlType (*want)(const std::string&, bool)) {
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
  const ModelShapes s = shapes_of(src);
  const auto plan = plan_types(s.tensors, o, s.n_layer, s.n_expert, /*n_gqa=*/2, has_imatrix);
  for (size_t i = 0; i < plan.size(); ++i) {
    INFO(s.tensors[i].name);
    CHECK(plan[i].type == want(s.tensors[i].name, has_imatrix));
  }
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

GgmlType iq4_xs_choice(const std::string& n, bool imatrix) {
  if (has(n, "_norm") || has(n, "ffn_gate_inp")) return GgmlType::F32;
  if (n == "output.weight") return GgmlType::Q6_K;
  // 64 columns: IQ4_XS falls back to IQ4_NL; layer 0 (< n_layer / 8) wants Q5_K without imatrix -> Q5_1.
  if (has(n, "ffn_down_exps")) return !imatrix && n.rfind("blk.0.", 0) == 0 ? GgmlType::Q5_1 : GgmlType::IQ4_NL;
  return GgmlType::IQ4_XS;
}

GgmlType mxfp4_moe_choice(const std::string& n, bool) {
  if (has(n, "_norm") || has(n, "ffn_gate_inp")) return GgmlType::F32;
  return has(n, "_exps") ? GgmlType::MXFP4 : GgmlType::Q8_0;
}

}  // namespace

TEST_CASE("plan: llama-quantize's IQ4_XS and MXFP4_MOE choices on the trained fixture", "[quant]") {
  check_plan_types(preset(Preset::iq4_xs), false, iq4_xs_choice);
  check_plan_types(preset(Preset::iq4_xs), true, iq4_xs_choice);
  check_plan_types(preset(Preset::mxfp4_moe), false, mxfp4_moe_choice);
  // IQ4_XS's attn_v rule (n_head / n_head_kv >= 4: Q5_K) and the 8-expert rules.
  std::vector<TensorShape> t(3);
  t[0] = {"blk.0.attn_v.weight", GgmlType::F16, 2, {256, 64, 1, 1}};
  t[1] = {"blk.0.attn_output.weight", GgmlType::F16, 2, {256, 256, 1, 1}};
  t[2] = {"blk.0.attn_k.weight", GgmlType::F16, 2, {256, 64, 1, 1}};
  auto p = plan_types(t, preset(Preset::iq4_xs), 8, 32, 4, false);
  CHECK(p[0].type == GgmlType::Q5_K);
  CHECK(p[1].type == GgmlType::IQ4_XS);
  p = plan_types(t, preset(Preset::iq4_xs), 8, 8, 2, false);
  CHECK(p[0].type == GgmlType::Q8_0);
  CHECK(p[1].type == GgmlType::Q5_K);
  CHECK(p[2].type == GgmlType::Q8_0);
}

TEST_CASE("plan: les-mixed is the fixture's mixed recipe, fallbacks included", "[quant]") {
  check_plan_matches("trained/tiny-qwen3moe-F16.gguf", "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf",
                     preset(Preset::les_mixed));
  // The fixture's own command line: Q4_K_S-like base with overrides gives the same.
  PlanOptions o = preset(Preset::q4_k_m);
  o.overrides.push_back(*parse_type_override("ffn_(gate|up|down)_exps=q3_k"));
  o.overrides.push_back(*parse_type_override("attn_(q|k|v|output)\\.weight=q4_k"));
  o.token_embd_type = GgmlType::Q4_K;
  o.output_type = GgmlType::Q4_K;
  check_plan_matches("trained/tiny-qwen3moe-F16.gguf", "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf", o);
}

TEST_CASE("plan: overrides, their order, and what is never quantised", "[quant]") {
  std::vector<TensorShape> t(6);
  t[0] = {"token_embd.weight", GgmlType::F16, 2, {256, 1000, 1, 1}};
  t[1] = {"blk.0.attn_norm.weight", GgmlType::F32, 1, {256, 1, 1, 1}};
  t[2] = {"blk.0.ffn_gate_inp.weight", GgmlType::F32, 2, {256, 8, 1, 1}};
  t[3] = {"blk.0.ffn_down_exps.weight", GgmlType::F16, 3, {64, 256, 8, 1}};
  t[4] = {"blk.0.ffn_up_exps.weight", GgmlType::F16, 3, {256, 64, 8, 1}};
  t[5] = {"output.weight", GgmlType::F16, 2, {256, 1000, 1, 1}};
  PlanOptions o = preset(Preset::les_mixed);
  auto p = plan_types(t, o, 1, 8);
  CHECK(p[0].type == GgmlType::Q4_K);
  CHECK_FALSE(p[1].quantize);
  CHECK(p[1].type == GgmlType::F32);
  CHECK_FALSE(p[2].quantize);  // routers stay F32
  CHECK(p[3].type == GgmlType::Q4_0);  // Q3_K wanted, 64 columns: fallback
  CHECK(p[3].fallback);
  CHECK(p[3].wanted == GgmlType::Q3_K);
  CHECK(p[4].type == GgmlType::Q3_K);
  CHECK(p[5].type == GgmlType::Q4_K);
  CHECK(plan_types(t, preset(Preset::les_mixed_down4), 1, 8)[3].type == GgmlType::Q5_0);  // Q4_K -> Q5_0

  o.overrides.push_back(*parse_type_override("exps=q8_0"));
  o.overrides.push_back(*parse_type_override("up_exps=q6_k"));  // later: never reached for up_exps
  o.output_type = GgmlType::Q6_K;
  o.token_embd_type = GgmlType::Q8_0;
  p = plan_types(t, o, 1, 8);
  CHECK(p[3].type == GgmlType::Q8_0);
  CHECK(p[4].type == GgmlType::Q8_0);
  CHECK(p[5].type == GgmlType::Q6_K);
  CHECK(p[0].type == GgmlType::Q8_0);
  o.overrides.insert(o.overrides.begin(), *parse_type_override("ffn_up_exps=iq2_xxs"));
  p = plan_types(t, o, 1, 8);
  CHECK(p[4].type == GgmlType::IQ2_XXS);
  CHECK(p[4].needs_imatrix);
}

TEST_CASE("plan: fallbacks and parsing", "[quant]") {
  CHECK(fallback_type(GgmlType::Q3_K, 64) == GgmlType::Q4_0);
  CHECK(fallback_type(GgmlType::Q2_K, 64) == GgmlType::Q4_0);
  CHECK(fallback_type(GgmlType::Q4_K, 64) == GgmlType::Q5_0);
  CHECK(fallback_type(GgmlType::Q5_K, 64) == GgmlType::Q5_1);
  CHECK(fallback_type(GgmlType::Q6_K, 64) == GgmlType::Q8_0);
  CHECK(fallback_type(GgmlType::IQ2_XXS, 64) == GgmlType::IQ4_NL);
  CHECK(fallback_type(GgmlType::Q4_K, 48) == GgmlType::F16);  // not even a multiple of 32
  CHECK(fallback_type(GgmlType::Q4_K, 512) == GgmlType::Q4_K);
  CHECK_FALSE(parse_type_override("noequals").ok());
  CHECK_FALSE(parse_type_override("attn=").ok());
  CHECK_FALSE(parse_type_override("attn=q9_k").ok());
  CHECK_FALSE(parse_type_override("([=q4_k").ok());
  CHECK(parse_type_name("Q4_K").ok());
  CHECK(parse_type_name("bf16").ok());
  CHECK(preset_from_name("Q4_K_M") == Preset::q4_k_m);
  CHECK(preset_from_name("les-mixed-down4") == Preset::les_mixed_down4);
  CHECK_FALSE(preset_from_name("q4_k_x").has_value());
  CHECK(preset_file_type(Preset::q4_k_m) == 15);
  CHECK(preset_file_type(Preset::q8_0) == 7);
  CHECK(preset_file_type(Preset::q3_k_m) == 12);
  CHECK(preset_from_name("IQ4_XS") == Preset::iq4_xs);
  CHECK(preset_from_name("mxfp4_moe") == Preset::mxfp4_moe);
  CHECK(preset_file_type(Preset::iq4_xs) == 30);
  CHECK(preset_file_type(Preset::mxfp4_moe) == 38);
}

TEST_CASE("plan: the iq3_xxs and iq2_xxs presets give llama-quantize's types", "[quant][iquants]") {
  // Recorded from llama-quantize's files of the trained fixture (tests/quant/data/, its note says how).
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
  std::ifstream f(std::string(LES_TESTS_SOURCE_DIR) + "/quant/data/trained_llama_quantize_iq_types.json");
  REQUIRE(f.good());
  const auto recorded = nlohmann::json::parse(f);
  const ModelShapes s = shapes_of(src);
  for (const auto& [name, p] : {std::pair<const char*, Preset>{"IQ3_XXS", Preset::iq3_xxs}, {"IQ2_XXS", Preset::iq2_xxs}}) {
    const auto& types = recorded["files"][name];
    REQUIRE(types.size() > 40);
    const auto plan = plan_types(s.tensors, preset(p), s.n_layer, s.n_expert, /*n_gqa=*/2, /*has_imatrix=*/true);
    int checked = 0, mismatches = 0;
    for (size_t i = 0; i < plan.size(); ++i) {
      if (!types.contains(s.tensors[i].name)) {
        CHECK_FALSE(plan[i].quantize);
        continue;
      }
      ++checked;
      const std::string theirs = types[s.tensors[i].name].get<std::string>();
      if (theirs != ggml_type_name(plan[i].type)) {
        ++mismatches;
        UNSCOPED_INFO(name << " " << s.tensors[i].name << ": plan " << ggml_type_name(plan[i].type)
                           << ", llama-quantize " << theirs);
      }
    }
    CHECK(checked == static_cast<int>(types.size()));
    CHECK(mismatches == 0);
  }
}

TEST_CASE("plan: the iq presets on llama-quantize's cut-down i-quant files of the source tree", "[quant][iquants]") {
  // Their own shapes: every quantised tensor must get the type llama-quantize gave it.
  const std::string dir = std::string(LES_TESTS_SOURCE_DIR) + "/core/model/data/iquants/";
  for (const auto& [stem, p] : {std::pair<const char*, Preset>{"tiny-2l-IQ3_XXS", Preset::iq3_xxs},
                                {"tiny-2l-IQ2_XXS", Preset::iq2_xxs}}) {
    const ModelShapes m = shapes_of(dir + stem + ".gguf");
    const auto plan = plan_types(m.tensors, preset(p), m.n_layer, m.n_expert, /*n_gqa=*/2, /*has_imatrix=*/true);
    for (size_t i = 0; i < plan.size(); ++i) {
      INFO(stem << " " << m.tensors[i].name);
      CHECK(plan[i].type == m.tensors[i].type);
    }
  }
}

TEST_CASE("plan: les-mixed-iq3 and les-mixed-iq2", "[quant][iquants]") {
  std::vector<TensorShape> t(5);
  t[0] = {"token_embd.weight", GgmlType::F16, 2, {256, 1000, 1, 1}};
  t[1] = {"blk.0.attn_q.weight", GgmlType::F16, 2, {256, 256, 1, 1}};
  t[2] = {"blk.0.ffn_down_exps.weight", GgmlType::F16, 3, {64, 256, 8, 1}};
  t[3] = {"blk.0.ffn_up_exps.weight", GgmlType::F16, 3, {256, 64, 8, 1}};
  t[4] = {"blk.0.ffn_gate_exps.weight", GgmlType::F16, 3, {256, 64, 8, 1}};
  auto p = plan_types(t, preset(Preset::les_mixed_iq3), 1, 8);
  CHECK(p[0].type == GgmlType::Q4_K);
  CHECK(p[1].type == GgmlType::Q4_K);
  CHECK(p[2].type == GgmlType::IQ4_NL);  // 64 columns: IQ3_XXS falls back
  CHECK(p[2].wanted == GgmlType::IQ3_XXS);
  CHECK(p[3].type == GgmlType::IQ3_XXS);
  CHECK(p[3].needs_imatrix);
  PlanOptions o = preset(Preset::les_mixed_iq2);
  o.iq2_xs_experts = {"blk.0.ffn_gate_exps.weight"};
  p = plan_types(t, o, 1, 8);
  CHECK(p[1].type == GgmlType::Q4_K);
  CHECK(p[3].type == GgmlType::IQ2_XXS);
  CHECK(p[4].type == GgmlType::IQ2_XS);
  CHECK(preset_from_name("LES-MIXED-IQ2") == Preset::les_mixed_iq2);
  CHECK(preset_from_name("iq3_xxs") == Preset::iq3_xxs);
  CHECK(preset_file_type(Preset::iq3_xxs) == 23);
  CHECK(preset_file_type(Preset::iq2_xxs) == 19);
  CHECK(preset_file_type(Preset::les_mixed_iq2) == 14);
  for (Preset q : {Preset::iq3_xxs, Preset::iq2_xxs, Preset::les_mixed_iq3, Preset::les_mixed_iq2})
    CHECK(preset_from_name(preset_name(q)) == q);
}
