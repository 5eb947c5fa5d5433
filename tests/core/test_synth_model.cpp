// Synthetic model: the file opens with the GGUF reader, has the preset's
// qwen3moe shape and tensors, a usable tokenizer, deterministic weights.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <iterator>

#include "core/gguf_reader.h"
#include "core/synth_model.h"
#include "support/fixtures.h"

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
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

  // Same preset + seed -> identical bytes; another seed -> different weights.
  const std::string path2 = les::test::temp_dir() + "/tiny2.gguf";
  REQUIRE(les::write_synth_model(*preset, les::SynthOptions{}, path2).ok());
  CHECK(read_all(path) == read_all(path2));
  les::SynthOptions other;
  other.seed = 99;
  REQUIRE(les::write_synth_model(*preset, other, path2).ok());
  CHECK(read_all(path) != read_all(path2));
}

TEST_CASE("synth rejects unsupported types and bad presets", "[synth]") {
  auto preset = les::synth_preset("tiny");
  REQUIRE(preset.ok());
  les::SynthOptions q;
  q.type = les::GgmlType::IQ2_XXS;
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
