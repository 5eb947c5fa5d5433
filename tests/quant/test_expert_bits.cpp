// les-mixed-iq2's bit allocation (quant/expert_bits.h): the ranking by
// imatrix-weighted squared weights, the fraction of weights picked, and on
// the trained fixture the scores of its routed experts.
#include <catch2/catch.hpp>

#include "core/gguf/gguf_reader.h"
#include "quant/expert_bits.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::quant;

TEST_CASE("pick_iq2_xs_experts takes the highest scores up to the fraction of weights", "[quant][iquants]") {
  const std::vector<ExpertScore> s = {{"a", 1.0, 100}, {"b", 3.0, 100}, {"c", 2.0, 200}, {"d", 3.0, 100}};
  CHECK(pick_iq2_xs_experts(s, 0.0).empty());
  CHECK(pick_iq2_xs_experts(s, 0.4) == std::vector<std::string>{"b", "d"});  // 200 of 500 weights
  CHECK(pick_iq2_xs_experts(s, 0.5) == std::vector<std::string>{"b", "d"});  // half of c would end at 300 > 250
  CHECK(pick_iq2_xs_experts(s, 0.65) == std::vector<std::string>{"b", "d", "c"});
  CHECK(pick_iq2_xs_experts(s, 1.0).size() == 4);
  CHECK(pick_iq2_xs_experts({}, 0.5).empty());
}

TEST_CASE("score_routed_experts on the trained fixture", "[quant][iquants]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(imat_path, "trained/imatrix-train.gguf");
  gguf::ReadOptions ro;
  ro.use_mmap = false;
  auto in = gguf::GgufFile::open(f16, ro);
  REQUIRE(in.ok());
  auto im = read_imatrix(imat_path);
  REQUIRE(im.ok());
  auto scores = score_routed_experts(**in, f16, *im);
  REQUIRE(scores.ok());
  // ffn_gate_exps and ffn_up_exps of 8 layers (ffn_down_exps rows have 64 columns: never IQ2).
  REQUIRE(scores->size() == 16);
  for (const ExpertScore& e : *scores) {
    INFO(e.name);
    CHECK(e.name.find("ffn_down") == std::string::npos);
    CHECK(e.n_weights == 256 * 64 * 32);
    CHECK(e.score > 0);
  }
  const auto picks = pick_iq2_xs_experts(*scores, 0.5);
  CHECK(picks.size() == 8);
  auto missing = score_routed_experts(**in, "/nonexistent.gguf", *im);
  CHECK(missing.status().code() == StatusCode::io);
}
