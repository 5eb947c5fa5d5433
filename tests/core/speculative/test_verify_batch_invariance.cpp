// A verify pass computes each row bit-identical to decoding it alone
// (Context::decode rows_as_decode), on every fixture model, with an F16 and a
// Q8_0 KV cache, resident and streamed at the smallest budget: the property
// that makes speculative greedy decoding token-for-token lossless. (A prefill
// batch with an F16 cache follows llama.cpp's batched attention order instead;
// see ForwardScratch::rows_as_decode.)
#include <catch2/catch.hpp>

#include <cstring>
#include <span>
#include <vector>

#include "spec_test_util.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::test;

namespace {

// Logits of `tokens` after a prefill of `prompt`: one decode per token, or
// verify passes of `chunk` rows.
std::vector<float> run(const Model& m, GgmlType kv, size_t budget, const std::vector<int32_t>& prompt,
                       const std::vector<int32_t>& tokens, size_t chunk) {
  ContextParams cp;
  cp.n_ctx = 96;
  cp.kv_type = kv;
  const std::unique_ptr<Context> c = make_context(m, cp, budget);
  Context& ctx = *c;
  REQUIRE(ctx.decode(prompt).ok());
  std::vector<float> out;
  for (size_t i = 0; i < tokens.size(); i += chunk) {
    const size_t n = std::min(chunk, tokens.size() - i);
    REQUIRE(ctx.decode(std::span<const int32_t>(tokens.data() + i, n), /*all_logits=*/true,
                       /*rows_as_decode=*/true)
                .ok());
    out.insert(out.end(), ctx.logits_all().begin(), ctx.logits_all().end());
  }
  return out;
}

}  // namespace

TEST_CASE("verify passes give each row the logits of decoding it alone, on every fixture", "[speculative]") {
  for (const char* rel :
       {"trained/tiny-qwen3moe-F16.gguf", "trained/tiny-qwen3moe-Q4_K_M.gguf",
        "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf", "synthetic/qwen3moe-F16.gguf", "synthetic/qwen3moe-Q8_0.gguf",
        "synthetic/qwen3moe-Q4_K_M.gguf", "synthetic/qwen3moe-Q3_K_M.gguf", "synthetic/qwen3moe-MIXED.gguf",
        "synthetic/mixtral-Q4_K_M.gguf", "synthetic/qwen2moe-Q4_K_M.gguf", "synthetic/llama-dense-Q4_K_M.gguf"}) {
    LES_REQUIRE_FIXTURE(path, rel);
    auto m = Model::load(path, {});
    REQUIRE(m.ok());
    const int32_t n_vocab = (**m).hparams().n_vocab;
    // 20 prompt positions then 24 tokens: attention sums run past 2 x 16 lanes.
    std::vector<int32_t> prompt = {1}, tokens;
    for (int i = 1; i < 20; ++i) prompt.push_back((i * 7919) % (n_vocab - 3) + 3);
    for (int i = 0; i < 24; ++i) tokens.push_back((i * 104729 + 17) % (n_vocab - 3) + 3);
    for (GgmlType kv : {GgmlType::F16, GgmlType::Q8_0}) {
      for (size_t budget : {size_t{0}, SIZE_MAX}) {
        if (budget != 0 && (**m).hparams().n_expert == 0) continue;
        INFO(rel << " kv " << ggml_type_name(kv) << (budget ? " streamed" : " resident"));
        const std::vector<float> alone = run(**m, kv, budget, prompt, tokens, 1);
        for (size_t chunk : {3, 7}) {
          INFO("rows per pass " << chunk);
          const std::vector<float> batched = run(**m, kv, budget, prompt, tokens, chunk);
          REQUIRE(batched.size() == alone.size());
          size_t first = alone.size();
          for (size_t i = 0; i < alone.size() && first == alone.size(); ++i)
            if (std::memcmp(&alone[i], &batched[i], sizeof(float)) != 0) first = i;
          INFO("first differing logit: token " << first / static_cast<size_t>(n_vocab));
          CHECK(first == alone.size());
        }
      }
    }
  }
}
