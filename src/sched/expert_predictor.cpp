#include "sched/expert_predictor.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace les::sched {

ExpertPredictor::ExpertPredictor(const Model& model, int32_t c)
    : model_(model), c_(std::clamp(c, 1, std::max(1, model.hparams().n_expert))) {}

Status ExpertPredictor::predict(int32_t layer, const float* u, int64_t n, std::vector<int32_t>& out) {
  LES_ASSIGN_OR_RETURN(const Router router, Router::of(model_, layer));
  const int64_t ne = router.n_expert();
  probs_.resize(static_cast<size_t>(n * ne));
  LES_RETURN_IF_ERROR(router.probs(u, n, probs_.data(), ms_));
  out.resize(static_cast<size_t>(n * c_));
  for (int64_t t = 0; t < n; ++t) router.top_k_experts(probs_.data() + t * ne, c_, out.data() + t * c_, rank_);
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
                                               int64_t first_row, std::vector<int32_t>* best_rank) {
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
  if (best_rank != nullptr) {
    best_rank->resize(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) (*best_rank)[i] = static_cast<int32_t>(best[static_cast<size_t>(ids[i])]);
  }
  return ids;
}

}  // namespace les::sched
