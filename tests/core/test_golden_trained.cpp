// Golden test: the trained tiny qwen3moe against llama.cpp (trained/reference/*.json).
#include "golden_support.h"

using namespace les;
using namespace les::test;

TEST_CASE("trained qwen3moe F16 matches llama.cpp greedy, logits and experts", "[golden]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(ref_path, "trained/reference/tiny-qwen3moe-F16.json");
  auto model = load_model(path);
  const auto ref = load_json(ref_path);
  GoldenStats st;
  run_prompt_checks(*model, ref, fixtures_root(), /*free_run=*/true, st);
  run_expert_checks(*model, ref, st);
  print_stats("tiny-qwen3moe-F16", st);
  CHECK(st.tf_agree == st.tf_checked);
  CHECK(st.free_run_prefix_fail == 0);
  CHECK(st.top20_max_err <= 1e-2);
  CHECK(st.top20_set_mismatch == 0);
  CHECK(st.top1_mismatch == 0);
  CHECK(st.experts_agree == st.experts_checked);
  CHECK(st.experts_checked > 0);
}
