// Golden test of the 4-bit codebook formats end to end: IQ4_XS and MXFP4
// tensors written by llama-quantize (81ff7abe) in the trained qwen3moe,
// against llama.cpp's greedy text and top-20 logits for the same file.
//
// llama-quantize's whole files (10-13 MB) are too big to ship, so each model
// is the trained F16 fixture with some of their tensors, byte for byte, from a
// committed patch (tests/core/model/data/*.patch.gguf, < 2 MB each;
// make_golden_patch.py states the recipes):
//   IQ4_XS: attn_q/k/v/output of every layer and ffn_gate/up_exps of layers
//           0-1 (llama-quantize IQ4_XS, no imatrix);
//   MXFP4:  ffn_gate/up/down_exps of layers 0-1 (llama-quantize MXFP4_MOE).
// The references (trained-*.json, prompt-1 logits .f32) come from llama.cpp
// on the same patched models (gen_golden_reference.cpp). Checks as for the
// trained K-quant files (golden_support.h, trained_quant): every teacher-forced
// step whose reference margin is >= 0.05 and the free-running greedy prefix
// before the first near-tie; the top-20 logit error is reported.
// Streaming over these models is in sched/test_streaming_identical.cpp.
#include "golden_support.h"
#include "support/gguf_patch.h"

using namespace les::test;

namespace {

void run_patch_golden(const char* patch, const char* reference) {
  const std::string path = golden_patch_model("trained/tiny-qwen3moe-F16.gguf", patch);
  if (path.empty()) return;
  const std::string data = std::string(LES_TESTS_SOURCE_DIR) + "/core/model/data";
  auto model = load_model(path);
  const auto ref = load_json(data + "/" + reference);
  GoldenStats st;
  run_prompt_checks(*model, ref, data, /*free_run=*/true, st);
  print_stats(patch, st);
  REQUIRE(st.tf_checked > 0);
  CHECK(st.tok_agree == st.tok_checked);
  CHECK(st.tf_agree == st.tf_checked);
  CHECK(st.free_run_prefix_fail == 0);
}

}  // namespace

TEST_CASE("trained qwen3moe with llama-quantize's IQ4_XS tensors matches llama.cpp", "[golden]") {
  run_patch_golden("trained-iq4_xs.patch.gguf", "trained-iq4_xs.json");
}

TEST_CASE("trained qwen3moe with llama-quantize's MXFP4 experts matches llama.cpp", "[golden]") {
  run_patch_golden("trained-mxfp4_moe.patch.gguf", "trained-mxfp4_moe.json");
}
