// Golden test: synthetic `llama` architecture files, Mixtral-style experts (8
// experts top-2, NORM RoPE) and dense SwiGLU with tied embeddings, against their
// llama.cpp references. Both shipped files are Q4_K_M (K-quant criteria).
#include "golden_support.h"

using namespace les::test;

TEST_CASE("synthetic mixtral Q4_K_M matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/mixtral-Q4_K_M.gguf", "synthetic/reference/mixtral-Q4_K_M.json", GoldenKind::kquant,
                   0, false});
}

TEST_CASE("synthetic llama-dense Q4_K_M (tied embeddings) matches llama.cpp", "[golden]") {
  run_golden_case({"synthetic/llama-dense-Q4_K_M.gguf", "synthetic/reference/llama-dense-Q4_K_M.json",
                   GoldenKind::kquant, 0, false});
}
