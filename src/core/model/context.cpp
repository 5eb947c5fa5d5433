#include "core/model/context.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace les {

Status Context::check_params(const ContextParams& p) {
  if (p.n_ctx < 0) return invalid_argument_error("ContextParams.n_ctx " + std::to_string(p.n_ctx) + " is negative");
  if (p.n_batch < 1) return invalid_argument_error("ContextParams.n_batch " + std::to_string(p.n_batch) + " < 1");
  return Status();
}

Result<std::unique_ptr<Context>> Context::create(const Model& model, const ContextParams& p,
                                                 std::unique_ptr<ExpertSource> experts) {
  LES_RETURN_IF_ERROR(check_params(p));
  ContextParams q = p;
  if (q.n_ctx == 0) q.n_ctx = std::min<int32_t>(model.hparams().n_ctx_train, 4096);
  if (q.n_threads <= 0) q.n_threads = model.params().n_threads;
  if (q.n_threads <= 0) q.n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const Hparams& hp = model.hparams();
  KvCacheParams kp;
  kp.n_layer = hp.n_layer;
  kp.n_ctx = q.n_ctx;
  kp.n_embd_k = hp.n_embd_k();
  kp.n_embd_v = hp.n_embd_v();
  kp.head_dim = hp.head_dim;
  kp.head_dim_v = hp.head_dim_v;
  kp.type = q.kv_type;
  LES_ASSIGN_OR_RETURN(KvCache kv, KvCache::create(kp));
  return std::unique_ptr<Context>(new Context(model, SequenceState(std::move(kv)), q, std::move(experts)));
}

Status Context::decode(std::span<const int32_t> tokens, bool all_logits) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return invalid_argument_error("decode: no tokens");
  const int32_t n_vocab = model_.hparams().n_vocab;
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= n_vocab)
      return invalid_argument_error("decode: token id " + std::to_string(tokens[i]) + " at index " +
                                    std::to_string(i) + " out of range [0, " + std::to_string(n_vocab) + ")");
  LES_RETURN_IF_ERROR(seq_.check_room(n));

  const int32_t n_past0 = seq_.n_past();
  std::vector<float> all;
  if (all_logits) all.resize(static_cast<size_t>(n) * n_vocab);
  for (int64_t c0 = 0; c0 < n; c0 += params_.n_batch) {
    const int64_t m = std::min<int64_t>(params_.n_batch, n - c0);
    const bool last_chunk = c0 + m == n;
    chunk_logits_.resize(static_cast<size_t>(all_logits ? m : 1) * n_vocab);
    Status st = forward_batch(model_, seq_, expert_source(), tokens.subspan(static_cast<size_t>(c0), static_cast<size_t>(m)),
                              all_logits, chunk_logits_.data(), scratch_, &observer_);
    if (!st.ok()) {
      (void)seq_.rollback(n_past0);  // drop the chunks of this call already appended
      return st;
    }
    seq_.advance(static_cast<int32_t>(m));
    if (all_logits) std::memcpy(all.data() + c0 * n_vocab, chunk_logits_.data(), chunk_logits_.size() * sizeof(float));
    if (last_chunk) {
      logits_.assign(chunk_logits_.end() - n_vocab, chunk_logits_.end());
    }
  }
  logits_all_ = std::move(all);
  has_all_ = all_logits;
  return Status();
}

std::span<const float> Context::logits() const { return logits_; }
std::span<const float> Context::logits_all() const {
  return has_all_ ? std::span<const float>(logits_all_) : std::span<const float>();
}

void Context::reset() noexcept {
  seq_.reset();
  logits_.clear();
  logits_all_.clear();
  has_all_ = false;
}

Status Context::trim(int32_t n_keep) { return seq_.trim(n_keep); }

}  // namespace les
