// Evaluating a text in llama-perplexity's chunks (perplexity and imatrix):
// tokenizing a whole text, and running one chunk of n_ctx tokens from an
// empty context in batches of n_batch with every position's logits kept and
// the chunk's first token replaced by BOS (when the vocabulary adds one).
//
// Thread-safety: one ChunkEvaluator per context, used from one thread.
#pragma once

#include <les/les.h>

#include <string>
#include <vector>

#include "util/status.h"

namespace les::tool {

// The text's tokens with BOS/EOS as the vocabulary adds them. Errors: invalid_argument.
Result<std::vector<les_token>> tokenize_text(const les_model* m, const std::string& text);

// BOS if the model's tokenizer adds it to a text, else -1.
les_token bos_if_added(const les_model* m);

class ChunkEvaluator {
 public:
  // bos: the token that replaces each chunk's first one (-1: none).
  ChunkEvaluator(les_context* ctx, int32_t n_ctx, int32_t n_batch, int32_t n_vocab, les_token bos);
  // Resets the context and evaluates chunk[0..n_ctx). Errors: internal (a
  // failed decode, with the library's message), cancelled (les_context_cancel).
  Status run(const les_token* chunk);
  // Position j's logits (n_vocab floats) of the last run.
  const float* logits(int32_t j) const { return logits_.data() + static_cast<size_t>(j) * n_vocab_; }

 private:
  les_context* ctx_;
  int32_t n_ctx_, n_batch_, n_vocab_;
  les_token bos_;
  std::vector<float> logits_;
  std::vector<les_token> batch_;
};

}  // namespace les::tool
