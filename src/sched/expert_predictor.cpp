#include "sched/expert_predictor.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace les::sched {

ExpertPredictor::ExpertPredictor(const Model& model, int32_t c)
    : model_(model), c_(std::clamp(c, 1, std::max(1, model.hparams().n_expert))) {}

Status ExpertPredictor::predict(int32_t layer, const float* u, int64_t n, std::vector<int32_t>& out) {
  const Hparams& hp = model_.hparams();
  if (layer < 0 || layer >= hp.n_layer || !model_.weights().layers[static_cast<size_t>(layer)].is_moe())
    return invalid_argument_error("predict: layer " + std::to_string(layer) + " has no router");
  const LayerWeights& l = model_.weights().layers[static_cast<size_t>(layer)];
  const int64_t ne = hp.n_expert, E = hp.n_embd;
  logits_.resize(static_cast<size_t>(n * ne));
  LES_RETURN_IF_ERROR(matmul(l.router, u, n, E, logits_.data(), ne, ms_));
  const float* bias = l.exp_probs_b.present() ? reinterpret_cast<const float*>(l.exp_probs_b.data) : nullptr;
  const bool sigmoid = model_.config().gating != ExpertGating::softmax;
  out.resize(static_cast<size_t>(n * c_));
  order_.resize(static_cast<size_t>(ne));
  for (int64_t t = 0; t < n; ++t) {
    float* s = logits_.data() + t * ne;
    if (sigmoid)
      for (int64_t j = 0; j < ne; ++j) s[j] = 1.0f / (1.0f + std::exp(-s[j])) + (bias ? bias[j] : 0.0f);
    for (int64_t j = 0; j < ne; ++j) order_[static_cast<size_t>(j)] = static_cast<int32_t>(j);
    std::partial_sort(order_.begin(), order_.begin() + c_, order_.end(),
                      [&](int32_t a, int32_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
    std::copy(order_.begin(), order_.begin() + c_, out.begin() + t * c_);
  }
  return Status();
}

Status ExpertPredictor::predict_from(int32_t layer, int32_t from, const float* u, int64_t n,
                                     std::vector<int32_t>& out) {
  const Hparams& hp = model_.hparams();
  if (from != layer - 1 || layer <= 0 || layer >= hp.n_layer) return predict(layer, u, n, out);
  if (ratio_.empty()) {
    ratio_.resize(static_cast<size_t>(hp.n_layer));
    for (int32_t l = 1; l < hp.n_layer; ++l) {
      const WeightView& a = model_.weights().layers[static_cast<size_t>(l)].ffn_norm;
      const WeightView& b = model_.weights().layers[static_cast<size_t>(l - 1)].ffn_norm;
      if (!a.present() || !b.present() || a.type != GgmlType::F32 || b.type != GgmlType::F32) continue;
      const float* ga = reinterpret_cast<const float*>(a.data);
      const float* gb = reinterpret_cast<const float*>(b.data);
      std::vector<float> r(static_cast<size_t>(hp.n_embd));
      bool ok = true;
      for (int64_t j = 0; j < hp.n_embd && ok; ++j) {
        ok = std::fabs(gb[j]) > 1e-30f;
        r[static_cast<size_t>(j)] = ok ? ga[j] / gb[j] : 0.0f;
      }
      if (ok) ratio_[static_cast<size_t>(l)] = std::move(r);
    }
  }
  const std::vector<float>& r = ratio_[static_cast<size_t>(layer)];
  if (r.empty()) return predict(layer, u, n, out);
  const int64_t E = hp.n_embd;
  rescaled_.resize(static_cast<size_t>(n * E));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < E; ++j) rescaled_[static_cast<size_t>(t * E + j)] = u[t * E + j] * r[static_cast<size_t>(j)];
  return predict(layer, rescaled_.data(), n, out);
}

std::vector<int32_t> ExpertPredictor::by_votes(const std::vector<int32_t>& rows, int32_t c, int32_t n_expert,
                                               int64_t first_row) {
  std::vector<int64_t> votes(static_cast<size_t>(n_expert), 0), best(static_cast<size_t>(n_expert), c);
  const int64_t n = static_cast<int64_t>(rows.size()) / std::max(c, 1);
  for (int64_t t = first_row; t < n; ++t)
    for (int32_t j = 0; j < c; ++j) {
      const int32_t e = rows[static_cast<size_t>(t * c + j)];
      ++votes[static_cast<size_t>(e)];
      best[static_cast<size_t>(e)] = std::min<int64_t>(best[static_cast<size_t>(e)], j);
    }
  std::vector<int32_t> ids;
  for (int32_t e = 0; e < n_expert; ++e)
    if (votes[static_cast<size_t>(e)] > 0) ids.push_back(e);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    if (votes[a] != votes[b]) return votes[a] > votes[b];
    if (best[a] != best[b]) return best[a] < best[b];
    return a < b;
  });
  return ids;
}

}  // namespace les::sched
