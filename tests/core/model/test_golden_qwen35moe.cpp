// Golden test: the synthetic random-weight qwen35moe files (Gated DeltaNet
// layers 0-2, gated full attention in layer 3, 8 experts top-4 plus a gated
// shared expert; fixtures README section 7) against their own llama.cpp
// references. F16: every teacher-forced step with margin >= 0.05, every clear
// expert set, and top-20 logits within 2e-2. K-quant files: >= 93% of the
// clear steps and >= 97% of the clear expert sets (GoldenKind in
// golden_support.h says why). The MTP file's trunk is bit-identical to the F16
// file and must give the same results (its blk.4 is not a trunk layer).
#include "golden_support.h"

using namespace les::test;

TEST_CASE("synthetic qwen35moe F16 matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen35moe-F16.gguf", "synthetic/reference/qwen35moe-F16.json", GoldenKind::exact, 2e-2,
                   false});
}

TEST_CASE("synthetic qwen35moe Q4_K_M matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen35moe-Q4_K_M.gguf", "synthetic/reference/qwen35moe-Q4_K_M.json",
                   GoldenKind::kquant, 0, false});
}

TEST_CASE("synthetic qwen35moe MIXED matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen35moe-MIXED.gguf", "synthetic/reference/qwen35moe-MIXED.json", GoldenKind::kquant,
                   0, false});
}

TEST_CASE("synthetic qwen35moe with an MTP block: the trunk matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen35moe-mtp-F16.gguf", "synthetic/reference/qwen35moe-mtp-F16.json",
                   GoldenKind::exact, 2e-2, false});
}
