// Golden test: synthetic qwen2moe (QKV bias, routed experts without
// renormalisation, sigmoid-gated shared expert, Q5_0/Q8_0 fallback for the
// 128-wide down projections) against its llama.cpp reference.
#include "golden_support.h"

using namespace les::test;

TEST_CASE("synthetic qwen2moe Q4_K_M matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/qwen2moe-Q4_K_M.gguf", "synthetic/reference/qwen2moe-Q4_K_M.json",
                   GoldenKind::kquant, 0, false});
}
