// Golden test: synthetic random-weight qwen3moe files (head_dim 128 != n_embd /
// n_head, 16 experts top-4) against their own llama.cpp references
// (synthetic/reference/*.json). F16: every teacher-forced step with margin >= 0.05
// and top-20 logits within 2e-2. Q8_0: every such step, and the top-20 logits of every
// prompt and the full prompt-1 logits within 2e-2 (they equal llama.cpp's to ~5e-8).
// K-quant files: >= 93% of the clear steps (GoldenKind in golden_support.h says why).
#include "golden_support.h"

using namespace les::test;

TEST_CASE("synthetic qwen3moe F16 matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen3moe-F16.gguf", "synthetic/reference/qwen3moe-F16.json", GoldenKind::exact, 2e-2,
                   false});
}

TEST_CASE("synthetic qwen3moe Q8_0 matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen3moe-Q8_0.gguf", "synthetic/reference/qwen3moe-Q8_0.json",
                   GoldenKind::q8_0, 2e-2, false});
}

TEST_CASE("synthetic qwen3moe Q4_K_M matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen3moe-Q4_K_M.gguf", "synthetic/reference/qwen3moe-Q4_K_M.json",
                   GoldenKind::kquant, 0, false});
}

TEST_CASE("synthetic qwen3moe Q3_K_M matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen3moe-Q3_K_M.gguf", "synthetic/reference/qwen3moe-Q3_K_M.json",
                   GoldenKind::kquant, 0, false});
}

TEST_CASE("synthetic qwen3moe MIXED matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen3moe-MIXED.gguf", "synthetic/reference/qwen3moe-MIXED.json", GoldenKind::kquant,
                   0, false});
}
