// ExpertPredictor: which experts a layer will select, from information that
// exists before that layer runs (lookahead).
//
// Cross-layer (predictors "A" and "B" of docs/model-graphs.md section 5): while
// layer l computes, score router_{l+1} · u_l, where u_l = RMSNorm(x)·ffn_norm_l
// is the vector layer l's own router saw, and take each token's top-c experts
// (k <= c <= 2k) by the router's own rule (core/model/router.h: gating
// probabilities plus exp_probs_b, ties to the lower id). So with c = k and
// layer l's real router input the prediction is the router's choice exactly;
// the two can never drift apart.
// Layer 0 of the next step uses the same rule on another input (the
// scheduler passes the last final hidden state or the token embeddings).
//
// Shapes: u is n_tokens rows of n_embd floats (row-major); the result is
// n_tokens rows of c expert ids, best first.
// Thread-safety: thread-compatible (owns scratch).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/model.h"
#include "core/model/router.h"
#include "core/model/weight_matmul.h"
#include "util/status.h"

namespace les::sched {

class ExpertPredictor {
 public:
  // c: candidates per token, clamped to [1, n_expert]. `model` must outlive this.
  ExpertPredictor(const Model& model, int32_t c);

  int32_t c() const noexcept { return c_; }
  // The router's top-c for each of n rows of u into `out` (n * c ids, best first).
  // Errors: invalid_argument (layer out of range or without a router), from matmul.
  Status predict(int32_t layer, const float* u, int64_t n, std::vector<int32_t>& out);
  // The same for u = layer `from`'s router input (RMSNorm(x)·ffn_norm_from):
  // rescaled by ffn_norm_layer / ffn_norm_from elementwise first, so router_layer
  // sees the residual x normed with its own layer's weights (when both norms
  // are F32 and ffn_norm_from has no zero; else u as is).
  Status predict_from(int32_t layer, int32_t from, const float* u, int64_t n, std::vector<int32_t>& out);
  // The distinct ids of `rows` (n * c), ordered by how many rows name them
  // (then by best rank, then id): the order to prefetch in. best_rank (when
  // given) receives each returned id's best (lowest) rank over the rows.
  static std::vector<int32_t> by_votes(const std::vector<int32_t>& rows, int32_t c, int32_t n_expert,
                                       int64_t first_row = 0, std::vector<int32_t>* best_rank = nullptr);

 private:
  const Model& model_;
  int32_t c_;
  std::vector<float> probs_;
  std::vector<float> rescaled_;
  std::vector<std::vector<float>> ratio_;  // per layer l: ffn_norm_l / ffn_norm_{l-1}, empty when unusable
  RouterOutput rank_;                      // the router's ranking scratch
  MatmulScratch ms_;
};

}  // namespace les::sched
