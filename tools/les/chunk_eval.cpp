// Chunked evaluation of a text; see chunk_eval.h.
#include "chunk_eval.h"

#include <algorithm>
#include <climits>

namespace les::tool {

Result<std::vector<les_token>> tokenize_text(const les_model* m, const std::string& text) {
  int32_t n = 0;
  std::vector<les_token> ids(text.size() + 16);
  const int32_t cap = static_cast<int32_t>(std::min<size_t>(ids.size(), INT32_MAX));
  les_status st = les_tokenize(m, text.data(), text.size(), true, false, ids.data(), cap, &n);
  if (st == LES_ERR_INVALID_ARGUMENT && n > cap) {
    ids.resize(static_cast<size_t>(n));
    st = les_tokenize(m, text.data(), text.size(), true, false, ids.data(), n, &n);
  }
  if (st != LES_OK) return invalid_argument_error(std::string("tokenizing the text: ") + les_last_error());
  ids.resize(static_cast<size_t>(n));
  return ids;
}

les_token bos_if_added(const les_model* m) {
  les_token ids[8];
  int32_t n = 0;
  const les_token bos = les_token_bos(m);
  const bool adds = bos >= 0 && les_tokenize(m, "a", 1, true, false, ids, 8, &n) == LES_OK && n > 0 && ids[0] == bos;
  return adds ? bos : -1;
}

ChunkEvaluator::ChunkEvaluator(les_context* ctx, int32_t n_ctx, int32_t n_batch, int32_t n_vocab, les_token bos)
    : ctx_(ctx), n_ctx_(n_ctx), n_batch_(std::max(1, std::min(n_batch, n_ctx))), n_vocab_(n_vocab), bos_(bos),
      logits_(static_cast<size_t>(n_ctx) * static_cast<size_t>(n_vocab)) {}

Status ChunkEvaluator::run(const les_token* chunk) {
  if (les_context_reset(ctx_) != LES_OK) return internal_error(std::string("reset: ") + les_last_error());
  for (int32_t s = 0; s < n_ctx_; s += n_batch_) {
    const int32_t n = std::min(n_batch_, n_ctx_ - s);
    batch_.assign(chunk + s, chunk + s + n);
    if (s == 0 && bos_ >= 0) batch_[0] = bos_;
    if (les_status st = les_context_decode_all_logits(ctx_, batch_.data(), n); st != LES_OK) {
      const std::string msg = std::string("decode: ") + les_status_name(st) + ": " + les_last_error();
      return st == LES_ERR_CANCELLED ? cancelled_error(msg) : internal_error(msg);
    }
    for (int32_t i = 0; i < n; ++i)
      std::copy_n(les_context_logits_ith(ctx_, i), n_vocab_, logits_.data() + static_cast<size_t>(s + i) * n_vocab_);
  }
  return Status();
}

}  // namespace les::tool
