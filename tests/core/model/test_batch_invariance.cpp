// Batch size never changes a result: a token's logits are bit-identical
// whether it is decoded alone or inside a batch of any size (prefill chunks,
// speculative verification of drafted tokens). The matmul kernels guarantee it
// per output element (vec_dot_multi is bit-identical to vec_dot, kernels.h);
// this checks the whole forward pass on the trained fixtures, whose weights
// are Q4_K/Q6_K (Q4_K_M) and Q3_K experts (mixed).
//
// KV cache Q8_0 only: with an F16 cache the attention deliberately follows
// ggml's two F16 summation orders (tinyBLAS for batches, vec_dot for single
// tokens; ops::F16DotOrder), which the llama.cpp golden tests match bit for
// bit, so there a token's logits differ in the last bits past 32 KV positions
// between batched and single-token decoding (as they do in llama.cpp).
#include <catch2/catch.hpp>

#include <cstring>
#include <span>
#include <vector>

#include "core/model/context.h"
#include "core/model/model.h"
#include "kernels/ggml_type.h"
#include "support/fixtures.h"

using namespace les;

namespace {

// Logits of every token of `tokens` decoded in chunks of `chunk` tokens (all_logits).
std::vector<float> decode_in_chunks(const Model& m, GgmlType kv_type, const std::vector<int32_t>& tokens, size_t chunk) {
  ContextParams cp;
  cp.n_ctx = 64;
  cp.n_threads = 2;
  cp.kv_type = kv_type;
  auto c = Context::create(m, cp);
  REQUIRE(c.ok());
  std::vector<float> out;
  for (size_t i = 0; i < tokens.size(); i += chunk) {
    const size_t n = std::min(chunk, tokens.size() - i);
    REQUIRE((*c)->decode(std::span<const int32_t>(tokens.data() + i, n), /*all_logits=*/true).ok());
    const auto all = (*c)->logits_all();
    out.insert(out.end(), all.begin(), all.end());
  }
  return out;
}

}  // namespace

TEST_CASE("a token's logits are bit-identical decoded alone or in a batch", "[golden][batch]") {
  // 40 positions: the attention sums over the KV positions run past 2 x 16 lanes,
  // where summation orders can differ.
  std::vector<int32_t> tokens = {1};
  for (int i = 1; i < 40; ++i) tokens.push_back(static_cast<int32_t>((i * 7919) % 8000 + 3));
  for (const char* file : {"trained/tiny-qwen3moe-Q4_K_M.gguf", "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf"}) {
    LES_REQUIRE_FIXTURE(path, file);
    auto m = Model::load(path, {});
    REQUIRE(m.ok());
    for (GgmlType kv : {GgmlType::Q8_0}) {
      INFO(file << " kv " << ggml_type_name(kv));
      const std::vector<float> alone = decode_in_chunks(**m, kv, tokens, 1);
      REQUIRE(alone.size() == tokens.size() * static_cast<size_t>((**m).hparams().n_vocab));
      for (size_t chunk : {2, 3, 5, 40}) {  // 40: the whole sequence as one prefill batch
        INFO("chunk " << chunk);
        const std::vector<float> batched = decode_in_chunks(**m, kv, tokens, chunk);
        REQUIRE(batched.size() == alone.size());
        size_t first_diff = alone.size();
        for (size_t i = 0; i < alone.size() && first_diff == alone.size(); ++i)
          if (std::memcmp(&alone[i], &batched[i], sizeof(float)) != 0) first_diff = i;
        INFO("first differing logit: token " << first_diff / static_cast<size_t>((**m).hparams().n_vocab));
        CHECK(first_diff == alone.size());
      }
    }
  }
}
