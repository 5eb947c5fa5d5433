// Synthetic model: the file opens with the GGUF reader, has the preset's
// qwen3moe shape and tensors, a usable tokenizer, deterministic weights.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "core/gguf/gguf_reader.h"
#include "synth/synth_model.h"
#include "core/tokenizer/tokenizer.h"
#include "kernels/ref.h"
#include "support/fixtures.h"

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// "tiny" cut to 2 layers of 4 experts (rows stay 256 wide, so every K-quant
// applies): the same generator and writer at a quarter of the expert weights,
// for the checks that are about the generator rather than the tiny preset's
// shape (and that would otherwise spend seconds quantising, minutes under ASan).
les::SynthPreset smaller_tiny() {
  auto preset = les::synth_preset("tiny");
  REQUIRE(preset.ok());
  les::SynthPreset p = *preset;
  p.name = "tiny-2x4";
  p.n_layer = 2;
  p.n_expert = 4;
  p.n_expert_used = 2;
  return p;
}

}  // namespace

TEST_CASE("synth presets: tiny exists, unknown names are rejected", "[synth]") {
  auto names = les::synth_preset_names();
  REQUIRE_FALSE(names.empty());
  CHECK(names[0] == "tiny");
  auto bad = les::synth_preset("huge-nonexistent");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("tiny") != std::string::npos);
}

TEST_CASE("synth normal generator: deterministic, roughly N(0,1)", "[synth]") {
  CHECK(les::synth_normal(1, 2, 3) == les::synth_normal(1, 2, 3));
  CHECK(les::synth_normal(1, 2, 3) != les::synth_normal(1, 2, 4));
  CHECK(les::synth_normal(1, 2, 3) != les::synth_normal(2, 2, 3));
  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = les::synth_normal(7, 0, static_cast<uint64_t>(i));
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  // Standard errors: mean 1/sqrt(n) = 0.0022, variance sqrt(2/n) = 0.0032.
  CHECK(std::abs(mean) < 0.011);
  CHECK(std::abs(var - 1.0) < 0.016);
}

TEST_CASE("synth tiny writes a loadable qwen3moe GGUF", "[synth]") {
  auto preset = les::synth_preset("tiny");
  REQUIRE(preset.ok());
  const std::string path = les::test::temp_dir() + "/tiny.gguf";
  auto info = les::write_synth_model(*preset, les::SynthOptions{}, path);
  REQUIRE(info.ok());
  auto f = les::gguf::GgufFile::open(path);
  REQUIRE(f.ok());
  const auto& g = **f;
  CHECK(g.architecture() == "qwen3moe");
  CHECK(*g.get_uint("qwen3moe.block_count") == static_cast<uint64_t>(preset->n_layer));
  CHECK(*g.get_uint("qwen3moe.expert_count") == static_cast<uint64_t>(preset->n_expert));
  CHECK(*g.get_uint("qwen3moe.expert_used_count") == static_cast<uint64_t>(preset->n_expert_used));
  CHECK(*g.get_uint(les::kSynthVersionKey) == les::kSynthVersion);
  CHECK(g.tensors().size() == 3 + 12 * static_cast<size_t>(preset->n_layer));
  const auto* exps = g.find_tensor("blk.0.ffn_down_exps.weight");
  REQUIRE(exps != nullptr);
  CHECK(exps->type == les::GgmlType::F16);
  CHECK(exps->ne[0] == preset->n_ff_exp);
  CHECK(exps->ne[1] == preset->n_embd);
  CHECK(exps->ne[2] == preset->n_expert);
  const auto* router = g.find_tensor("blk.3.ffn_gate_inp.weight");
  REQUIRE(router != nullptr);
  CHECK(router->type == les::GgmlType::F32);
  const auto* embd = g.find_tensor("token_embd.weight");
  REQUIRE(embd != nullptr);
  CHECK(embd->ne[1] == info->n_vocab);

  // Its tokenizer round-trips text, including bytes never seen in training.
  auto tok = les::Tokenizer::from_gguf(g);
  REQUIRE(tok.ok());
  const std::string text = "The river was grey. Caf\xC3\xA9 \xE2\x98\x95 42!";
  auto ids = (*tok)->tokenize(text, true, false);
  REQUIRE(ids.ok());
  CHECK(ids->front() == 1);  // BOS
  CHECK(ids->size() < text.size());  // merges were used
  auto back = (*tok)->detokenize(std::span<const int32_t>(*ids).subspan(1));
  REQUIRE(back.ok());
  CHECK(*back == text);

}

TEST_CASE("synth bytes depend on preset and seed only, not on the thread count", "[synth]") {
  const les::SynthPreset preset = smaller_tiny();
  const std::string d = les::test::temp_dir();
  les::SynthOptions one_thread;
  one_thread.n_threads = 1;
  REQUIRE(les::write_synth_model(preset, one_thread, d + "/s1.gguf").ok());
  const std::string first = read_all(d + "/s1.gguf");
  REQUIRE(!first.empty());
  // Same preset + seed -> identical bytes; another seed -> different weights.
  REQUIRE(les::write_synth_model(preset, les::SynthOptions{}, d + "/s2.gguf").ok());  // hardware threads
  CHECK(first == read_all(d + "/s2.gguf"));
  les::SynthOptions three_threads;
  three_threads.n_threads = 3;
  REQUIRE(les::write_synth_model(preset, three_threads, d + "/s2.gguf").ok());
  CHECK(first == read_all(d + "/s2.gguf"));  // the thread count never changes the bytes
  les::SynthOptions other;
  other.seed = 99;
  REQUIRE(les::write_synth_model(preset, other, d + "/s2.gguf").ok());
  CHECK(first != read_all(d + "/s2.gguf"));
}

TEST_CASE("synth quantised files hold the same weights up to quantisation error", "[synth]") {
  const les::SynthPreset preset = smaller_tiny();
  les::SynthOptions f32;
  f32.type = les::GgmlType::F32;
  les::SynthOptions q8;
  q8.type = les::GgmlType::Q8_0;
  les::SynthOptions q4k;
  q4k.type = les::GgmlType::Q4_K;
  const std::string d = les::test::temp_dir();
  REQUIRE(les::write_synth_model(preset, f32, d + "/f32.gguf").ok());
  REQUIRE(les::write_synth_model(preset, q8, d + "/q8.gguf").ok());
  REQUIRE(les::write_synth_model(preset, q4k, d + "/q4k.gguf").ok());
  auto a = les::gguf::GgufFile::open(d + "/f32.gguf");
  auto b = les::gguf::GgufFile::open(d + "/q8.gguf");
  auto c = les::gguf::GgufFile::open(d + "/q4k.gguf");
  REQUIRE((a.ok() && b.ok() && c.ok()));
  const char* name = "blk.1.ffn_up_exps.weight";
  const auto* ta = (*a)->find_tensor(name);
  const auto* tb = (*b)->find_tensor(name);
  const auto* tc = (*c)->find_tensor(name);
  REQUIRE((ta && tb && tc));
  CHECK(tb->type == les::GgmlType::Q8_0);
  CHECK(tc->type == les::GgmlType::Q4_K);
  CHECK((*b)->find_tensor("blk.1.ffn_gate_inp.weight")->type == les::GgmlType::F32);  // router stays F32
  const int64_t n = ta->ne[0];
  std::vector<float> ref(static_cast<size_t>(n)), y8(ref.size()), y4(ref.size());
  std::memcpy(ref.data(), (*a)->tensor_data(*ta).data(), ref.size() * 4);
  les::kernels::dequantize_row_q8_0_ref(reinterpret_cast<const les::block_q8_0*>((*b)->tensor_data(*tb).data()),
                                        y8.data(), n);
  les::kernels::dequantize_row_q4_K_ref(reinterpret_cast<const les::block_q4_K*>((*c)->tensor_data(*tc).data()),
                                        y4.data(), n);
  auto rel_rmse = [&](const std::vector<float>& y) {
    double e = 0, s = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      e += (y[i] - ref[i]) * (y[i] - ref[i]);
      s += ref[i] * ref[i];
    }
    return std::sqrt(e / s);
  };
  // Gaussian rows: Q8_0 ~0.5 %, Q4_K ~8 % relative RMSE; a wrong layout or row gives ~140 %.
  CHECK(rel_rmse(y8) < 0.01);
  CHECK(rel_rmse(y4) < 0.12);
}

TEST_CASE("synth tensor plan: qwen3moe names, unique streams, file order", "[synth]") {
  auto preset = les::synth_preset("tiny");
  REQUIRE(preset.ok());
  const auto plan = les::synth_tensor_plan(*preset, les::GgmlType::Q4_K, 500);
  REQUIRE(plan.size() == 3 + 12 * static_cast<size_t>(preset->n_layer));
  CHECK(plan.front().name == "token_embd.weight");
  CHECK(plan.back().name == "output.weight");
  std::set<std::string> names;
  for (size_t i = 0; i < plan.size(); ++i) {
    CHECK(plan[i].stream == i);
    names.insert(plan[i].name);
    if (plan[i].ne.size() == 1) CHECK(plan[i].type == les::GgmlType::F32);
  }
  CHECK(names.size() == plan.size());
  CHECK(names.count("blk.3.ffn_down_exps.weight"));
}

TEST_CASE("synth rejects unsupported types and bad presets", "[synth]") {
  auto preset = les::synth_preset("tiny");
  REQUIRE(preset.ok());
  les::SynthOptions q;
  q.type = les::GgmlType::IQ1_S;  // no LES quantiser
  CHECK_FALSE(les::write_synth_model(*preset, q, les::test::temp_dir() + "/bad.gguf").ok());
  les::SynthPreset p = *preset;
  p.n_expert_used = p.n_expert + 1;
  CHECK_FALSE(les::write_synth_model(p, {}, les::test::temp_dir() + "/bad.gguf").ok());
  p = *preset;
  p.arch = "mamba";
  CHECK_FALSE(les::write_synth_model(p, {}, les::test::temp_dir() + "/bad.gguf").ok());
  // Unwritable destination: io error, no crash.
  auto w = les::write_synth_model(*preset, {}, "/nonexistent-dir/x/y.gguf");
  REQUIRE_FALSE(w.ok());
}
