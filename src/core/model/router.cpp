#include "core/model/router.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/ops.h"

namespace les {

Router::Router(const LayerWeights& l, const ArchConfig& cfg, int32_t n_expert, int32_t n_expert_used)
    : w_(&l.router),
      bias_(l.exp_probs_b.present() ? reinterpret_cast<const float*>(l.exp_probs_b.data) : nullptr),
      gating_(cfg.gating),
      renorm_(cfg.moe_renorm),
      scale_(cfg.moe_weights_scale),
      n_expert_(n_expert),
      n_expert_used_(n_expert_used) {}

Result<Router> Router::of(const Model& model, int32_t layer) {
  const Hparams& hp = model.hparams();
  const auto& layers = model.weights().layers;
  if (layer < 0 || layer >= hp.n_layer_all || static_cast<size_t>(layer) >= layers.size() ||
      !layers[static_cast<size_t>(layer)].is_moe())
    return invalid_argument_error("router: layer " + std::to_string(layer) + " has no router");
  return Router(layers[static_cast<size_t>(layer)], model.config(), hp.n_expert, hp.n_expert_used);
}

Status Router::probs(const float* x, int64_t n, float* probs, MatmulScratch& ms) const {
  const int64_t ne = n_expert_;
  LES_RETURN_IF_ERROR(matmul(*w_, x, n, probs, ms));
  for (int64_t t = 0; t < n; ++t) {
    float* p = probs + t * ne;
    if (gating_ == ExpertGating::softmax) {
      ops::softmax(p, ne);
    } else {
      for (int64_t j = 0; j < ne; ++j) p[j] = 1.0f / (1.0f + std::exp(-p[j]));
    }
  }
  return Status();
}

void Router::top_k_experts(const float* probs, int32_t k, int32_t* ids, RouterOutput& scratch) const {
  const int64_t ne = n_expert_;
  std::vector<float>& score = scratch.score;
  std::vector<int32_t>& order = scratch.order;
  score.resize(static_cast<size_t>(ne));
  order.resize(static_cast<size_t>(ne));
  for (int64_t j = 0; j < ne; ++j) {
    score[static_cast<size_t>(j)] = bias_ ? probs[j] + bias_[j] : probs[j];
    order[static_cast<size_t>(j)] = static_cast<int32_t>(j);
  }
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    return score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)] ||
           (score[static_cast<size_t>(a)] == score[static_cast<size_t>(b)] && a < b);
  });
  std::copy(order.begin(), order.begin() + k, ids);
}

void Router::expert_weights(const float* probs, const int32_t* ids, int32_t k, float* w) const {
  double sum = 0;
  for (int32_t j = 0; j < k; ++j) {
    w[j] = probs[ids[j]];
    sum += w[j];
  }
  if (renorm_) {
    const float d = std::max(static_cast<float>(sum), 6.103515625e-5f);  // ggml's clamp of the sum
    for (int32_t j = 0; j < k; ++j) w[j] /= d;
  }
  if (scale_ != 0.0f)
    for (int32_t j = 0; j < k; ++j) w[j] *= scale_;
}

Status Router::route(const float* x, int64_t n, RouterOutput& out, MatmulScratch& ms) const {
  const int64_t ne = n_expert_, k = n_expert_used_;
  out.probs.resize(static_cast<size_t>(n * ne));
  out.selected.resize(static_cast<size_t>(n * k));
  out.weights.resize(static_cast<size_t>(n * k));
  LES_RETURN_IF_ERROR(probs(x, n, out.probs.data(), ms));
  for (int64_t t = 0; t < n; ++t) {
    const float* p = out.probs.data() + t * ne;
    int32_t* sel = out.selected.data() + t * k;
    top_k_experts(p, n_expert_used_, sel, out);
    expert_weights(p, sel, n_expert_used_, out.weights.data() + t * k);
  }
  return Status();
}

}  // namespace les
