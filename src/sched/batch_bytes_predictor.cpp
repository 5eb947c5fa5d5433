// Predicted bytes of a batch; see batch_bytes_predictor.h.
#include "sched/batch_bytes_predictor.h"

#include <algorithm>
#include <string>

#include "core/model/weight_matmul.h"
#include "kernels/ops.h"

namespace les::sched {

size_t BatchBytesPredictor::max_bytes(const Model& model) noexcept {
  const Hparams& hp = model.hparams();
  const size_t per_token = static_cast<size_t>(hp.n_layer) * static_cast<size_t>(std::max(hp.n_expert_used, 1)) *
                           sizeof(int32_t);
  const size_t keys = static_cast<size_t>(hp.n_layer) * static_cast<size_t>(hp.n_expert);
  // memo entries (+ node overhead), the embedding and router input, the
  // predictor's logits and ids, the union flags.
  return kMemoTokens * (per_token + 64) + 2 * static_cast<size_t>(hp.n_embd) * sizeof(float) +
         static_cast<size_t>(hp.n_expert) * (sizeof(float) + sizeof(int32_t)) + keys;
}

BatchBytesPredictor::BatchBytesPredictor(const Model& model)
    : model_(model), predictor_(model, std::max(model.hparams().n_expert_used, 1)) {}

Result<const std::vector<int32_t>*> BatchBytesPredictor::experts_of(int32_t token) {
  const Hparams& hp = model_.hparams();
  if (token < 0 || token >= hp.n_vocab)
    return invalid_argument_error("predicted batch bytes: token id " + std::to_string(token) + " outside [0, " +
                                  std::to_string(hp.n_vocab) + ")");
  if (auto it = memo_.find(token); it != memo_.end()) return &it->second;
  if (memo_.size() >= kMemoTokens) memo_.clear();
  const int64_t E = hp.n_embd;
  const int32_t k = std::max(hp.n_expert_used, 1);
  const ModelWeights& W = model_.weights();
  x_.resize(static_cast<size_t>(E));
  u_.resize(static_cast<size_t>(E));
  LES_RETURN_IF_ERROR(dequantize_row(W.tok_embd, token, x_.data()));
  std::vector<int32_t> out(static_cast<size_t>(hp.n_layer) * static_cast<size_t>(k), -1);
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = W.layers[static_cast<size_t>(l)];
    if (!L.is_moe() || L.ffn_norm.data == nullptr) continue;
    ops::rms_norm(x_.data(), reinterpret_cast<const float*>(L.ffn_norm.data), E, hp.rms_eps, u_.data());
    LES_RETURN_IF_ERROR(predictor_.predict(l, u_.data(), 1, ids_));
    std::copy_n(ids_.begin(), std::min<size_t>(ids_.size(), static_cast<size_t>(k)),
                out.begin() + static_cast<std::ptrdiff_t>(l) * k);
  }
  auto [it, ok] = memo_.emplace(token, std::move(out));
  (void)ok;
  return &it->second;
}

Status BatchBytesPredictor::predict(std::span<const int32_t> tokens, const std::function<bool(int32_t, int32_t)>& held,
                                    const std::function<size_t(int32_t)>& expert_bytes, std::span<uint64_t> out) {
  std::fill(out.begin(), out.end(), uint64_t{0});
  const Hparams& hp = model_.hparams();
  const int32_t k = std::max(hp.n_expert_used, 1);
  seen_.assign(static_cast<size_t>(hp.n_layer) * static_cast<size_t>(hp.n_expert), 0);
  uint64_t total = 0;
  const size_t n = std::min(tokens.size(), out.size());
  for (size_t j = 0; j < n; ++j) {
    Result<const std::vector<int32_t>*> ids = experts_of(tokens[j]);
    if (!ids.ok()) {
      std::fill(out.begin(), out.end(), uint64_t{0});
      return ids.status();
    }
    for (int32_t l = 0; l < hp.n_layer; ++l) {
      for (int32_t i = 0; i < k; ++i) {
        const int32_t e = (**ids)[static_cast<size_t>(l) * k + i];
        if (e < 0 || e >= hp.n_expert) continue;
        uint8_t& s = seen_[static_cast<size_t>(l) * hp.n_expert + e];
        if (s) continue;
        s = 1;
        if (!held(l, e)) total += expert_bytes(l);
      }
    }
    out[j] = total;
  }
  return Status();
}

}  // namespace les::sched
