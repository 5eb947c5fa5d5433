// Golden test: the trained tiny qwen3moe (F16, Q4_K_M, mixed Q3_K/Q4_K with
// imatrix) against llama.cpp (trained/reference/*.json). Trained files are the
// strict case: every teacher-forced step with margin >= 0.05 and the free-running
// greedy prefix before the first near-tie must match.
#include "golden_support.h"

using namespace les::test;

TEST_CASE("trained qwen3moe F16 matches llama.cpp", "[golden]") {
  run_golden_case({"trained/tiny-qwen3moe-F16.gguf", "trained/reference/tiny-qwen3moe-F16.json", GoldenKind::exact,
                   1e-2, true});
}

TEST_CASE("trained qwen3moe Q4_K_M matches llama.cpp", "[golden]") {
  GoldenCase gc{"trained/tiny-qwen3moe-Q4_K_M.gguf", "trained/reference/tiny-qwen3moe-Q4_K_M.json",
                GoldenKind::trained_quant, 0, true};
  run_golden_case(gc);
}

TEST_CASE("trained qwen3moe mixed Q3_K experts (imatrix) matches llama.cpp", "[golden]") {
  GoldenCase gc{"trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf",
                "trained/reference/tiny-qwen3moe-mixed-exps-Q3_K-imat.json", GoldenKind::trained_quant, 0, true};
  run_golden_case(gc);
}
