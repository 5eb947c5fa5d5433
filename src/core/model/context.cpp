#include "core/model/context.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/model/thread_count.h"

namespace les {

Status Context::check_params(const ContextParams& p) {
  if (p.n_ctx < 0) return invalid_argument_error("ContextParams.n_ctx " + std::to_string(p.n_ctx) + " is negative");
  if (p.n_batch < 1) return invalid_argument_error("ContextParams.n_batch " + std::to_string(p.n_batch) + " < 1");
  LES_RETURN_IF_ERROR(check_thread_count(p.n_threads, "ContextParams.n_threads"));
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
  RecurrentStateParams rp;
  if (hp.is_hybrid()) {
    // K/V only for the attention layers; conv and delta-rule states for the others.
    kp.layers.resize(static_cast<size_t>(hp.n_layer));
    for (int32_t il = 0; il < hp.n_layer; ++il) kp.layers[static_cast<size_t>(il)] = hp.is_recurrent(il) ? 0 : 1;
    rp.layers.assign(hp.recurrent_layers.begin(), hp.recurrent_layers.begin() + hp.n_layer);
    rp.d_conv = hp.ssm_d_conv;
    rp.conv_channels = hp.ssm_conv_channels();
    rp.n_k_heads = hp.ssm_n_group;
    rp.n_v_heads = hp.ssm_dt_rank;
    rp.head_dim = hp.ssm_d_state;
  }
  LES_ASSIGN_OR_RETURN(KvCache kv, KvCache::create(kp));
  LES_ASSIGN_OR_RETURN(RecurrentState rec, RecurrentState::create(rp));
  return std::unique_ptr<Context>(
      new Context(model, SequenceState(std::move(kv), std::move(rec)), q, std::move(experts)));
}

Status Context::decode(std::span<const int32_t> caller_tokens, bool all_logits, bool rows_as_decode) {
  if (caller_tokens.empty() && pending_ < 0) return invalid_argument_error("decode: no tokens");
  const int32_t n_vocab = model_.hparams().n_vocab;
  for (size_t i = 0; i < caller_tokens.size(); ++i)
    if (caller_tokens[i] < 0 || caller_tokens[i] >= n_vocab)
      return invalid_argument_error("decode: token id " + std::to_string(caller_tokens[i]) + " at index " +
                                    std::to_string(i) + " out of range [0, " + std::to_string(n_vocab) + ")");
  return decode_rows(caller_tokens, nullptr, all_logits, rows_as_decode);
}

Status Context::decode_embeddings(std::span<const float> embd, bool all_logits) {
  const size_t E = static_cast<size_t>(model_.hparams().n_embd);
  if (embd.empty()) return invalid_argument_error("decode_embeddings: no embedding rows");
  if (embd.size() % E != 0)
    return invalid_argument_error("decode_embeddings: " + std::to_string(embd.size()) +
                                  " floats is not a whole number of rows of n_embd = " + std::to_string(E));
  for (size_t i = 0; i < embd.size(); ++i)
    if (!std::isfinite(embd[i]))
      return invalid_argument_error("decode_embeddings: row " + std::to_string(i / E) + " holds a non-finite value (" +
                                    std::to_string(embd[i]) + " at column " + std::to_string(i % E) + ")");
  const std::vector<int32_t> rows(embd.size() / E, kEmbeddingToken);
  return decode_rows(rows, embd.data(), all_logits, /*rows_as_decode=*/false);
}

Status Context::decode_mixed(std::span<const int32_t> tokens, std::span<const float> embd, bool all_logits) {
  if (tokens.empty()) return invalid_argument_error("decode_mixed: no tokens");
  const int32_t n_vocab = model_.hparams().n_vocab;
  const size_t E = static_cast<size_t>(model_.hparams().n_embd);
  size_t n_rows = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == kEmbeddingToken) {
      ++n_rows;
      continue;
    }
    if (tokens[i] < 0 || tokens[i] >= n_vocab)
      return invalid_argument_error("decode_mixed: token id " + std::to_string(tokens[i]) + " at index " +
                                    std::to_string(i) + " out of range [0, " + std::to_string(n_vocab) + ")");
  }
  if (embd.size() != n_rows * E)
    return invalid_argument_error("decode_mixed: " + std::to_string(embd.size()) + " floats for " +
                                  std::to_string(n_rows) + " embedding rows of n_embd = " + std::to_string(E));
  for (size_t i = 0; i < embd.size(); ++i)
    if (!std::isfinite(embd[i]))
      return invalid_argument_error("decode_mixed: embedding row " + std::to_string(i / E) +
                                    " holds a non-finite value (" + std::to_string(embd[i]) + " at column " +
                                    std::to_string(i % E) + ")");
  return decode_rows(tokens, n_rows > 0 ? embd.data() : nullptr, all_logits, /*rows_as_decode=*/false);
}

Status Context::decode_rows(std::span<const int32_t> caller_tokens, const float* embd, bool all_logits,
                            bool rows_as_decode) {
  const int32_t n_vocab = model_.hparams().n_vocab;
  // The pending token goes first, in the same batch; its logits row is not returned.
  std::vector<int32_t> with_pending;
  std::span<const int32_t> tokens = caller_tokens;
  const int64_t skip = pending_ >= 0 ? 1 : 0;
  if (skip) {
    with_pending.reserve(caller_tokens.size() + 1);
    with_pending.push_back(pending_);
    with_pending.insert(with_pending.end(), caller_tokens.begin(), caller_tokens.end());
    tokens = with_pending;
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  LES_RETURN_IF_ERROR(seq_.check_room(n));

  const int32_t n_past0 = seq_.n_past();
  // A recurrent state cannot be unwound: mark it so a failure can return to it
  // (free: the next update writes a spare buffer). A caller's checkpoint does
  // the same when it journals far enough.
  const bool own_checkpoint = seq_.has_recurrent() && !seq_.has_checkpoint();
  if (own_checkpoint) LES_RETURN_IF_ERROR(seq_.checkpoint(0));
  const int64_t E = model_.hparams().n_embd;
  scratch_.attn.rows_as_decode = rows_as_decode;
  scratch_.ffn.union_experts = 0;
  scratch_.ffn.union_bytes = 0;
  std::vector<float> all, hidden;  // with the pending token's row; dropped below
  if (all_logits) all.resize(static_cast<size_t>(n) * n_vocab);
  if (params_.output_hidden) hidden.resize(static_cast<size_t>(n * E));
  const float* chunk_embd = embd;  // the next embedding row
  // A failed or interrupted call drops the chunks it already appended (and the recurrent updates).
  auto abandon = [&](Status st) {
    if (!seq_.restore(n_past0).ok()) {
      reset();
      st = st.with_context("the sequence was reset (its recurrent state could not return to position " +
                           std::to_string(n_past0) + ")");
    }
    if (own_checkpoint) seq_.drop_checkpoint();
    return st;
  };
  for (int64_t c0 = 0; c0 < n; c0 += params_.n_batch) {
    const int64_t m = std::min<int64_t>(params_.n_batch, n - c0);
    const bool last_chunk = c0 + m == n;
    if (c0 > 0 && !rows_as_decode && interrupt_requested())
      return abandon(cancelled_error("decode: interrupted after " + std::to_string(c0) + " of " +
                                     std::to_string(n) + " rows (none kept)"));
    chunk_logits_.resize(static_cast<size_t>(all_logits ? m : 1) * n_vocab);
    const auto chunk = tokens.subspan(static_cast<size_t>(c0), static_cast<size_t>(m));
    Status st = forward_batch(model_, seq_, expert_source(), chunk, all_logits, chunk_logits_.data(), scratch_,
                              &observers_, params_.output_hidden ? hidden.data() + c0 * E : nullptr, chunk_embd,
                              routing_override_ ? &routing_override_ : nullptr);
    if (chunk_embd != nullptr) chunk_embd += std::count(chunk.begin(), chunk.end(), kEmbeddingToken) * E;
    if (!st.ok()) return abandon(st);
    seq_.advance(static_cast<int32_t>(m));
    if (all_logits) std::memcpy(all.data() + c0 * n_vocab, chunk_logits_.data(), chunk_logits_.size() * sizeof(float));
    if (last_chunk) {
      logits_.assign(chunk_logits_.end() - n_vocab, chunk_logits_.end());
    }
  }
  if (own_checkpoint) seq_.drop_checkpoint();
  if (skip && all_logits) all.erase(all.begin(), all.begin() + n_vocab);
  logits_all_ = std::move(all);
  hidden_ = std::move(hidden);
  has_all_ = all_logits;
  all_pos0_ = n_past0 + static_cast<int32_t>(skip);
  hidden_pos0_ = n_past0;  // the pending token's hidden row is kept (an MTP head needs every position's)
  union_ = {scratch_.ffn.union_experts, scratch_.ffn.union_bytes};
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  pending_ = -1;
  return Status();
}

std::span<const float> Context::logits() const { return logits_; }
std::span<const float> Context::logits_all() const {
  return has_all_ ? std::span<const float>(logits_all_) : std::span<const float>();
}

std::span<const float> Context::hidden_all() const { return hidden_; }

void Context::reset() noexcept {
  seq_.reset();
  logits_.clear();
  logits_all_.clear();
  hidden_.clear();
  has_all_ = false;
  tokens_.clear();
  pending_ = -1;
}

Status Context::trim(int32_t n_keep) {
  if (n_keep < 0 || n_keep > n_tokens())
    return invalid_argument_error("trim: n_keep " + std::to_string(n_keep) + " is outside [0, " +
                                  std::to_string(n_tokens()) + "] (the tokens in the context)");
  if (n_keep == n_tokens()) return Status();
  if (n_keep == n_past()) {  // only the pending token goes
    pending_ = -1;
    return Status();
  }
  LES_RETURN_IF_ERROR(seq_.trim(n_keep));  // may refuse (recurrent state): nothing changed then
  pending_ = -1;
  tokens_.resize(static_cast<size_t>(n_keep));
  // logits() becomes the kept last position's row when the last decode
  // computed it (a speculative verify pass), else it is gone (it belonged to
  // a dropped position).
  const int64_t row = static_cast<int64_t>(n_keep) - 1 - all_pos0_;
  const size_t n_vocab = static_cast<size_t>(model_.hparams().n_vocab);
  if (has_all_ && row >= 0 && static_cast<size_t>(row + 1) * n_vocab <= logits_all_.size())
    logits_.assign(logits_all_.begin() + row * static_cast<int64_t>(n_vocab),
                   logits_all_.begin() + (row + 1) * static_cast<int64_t>(n_vocab));
  else
    logits_.clear();
  return Status();
}

Status Context::set_pending(int32_t token) {
  if (token < 0 || token >= model_.hparams().n_vocab)
    return invalid_argument_error("set_pending: token id " + std::to_string(token) + " out of range [0, " +
                                  std::to_string(model_.hparams().n_vocab) + ")");
  if (pending_ >= 0) return invalid_argument_error("set_pending: a pending token is already set");
  LES_RETURN_IF_ERROR(seq_.check_room(1));
  pending_ = token;
  return Status();
}

}  // namespace les
