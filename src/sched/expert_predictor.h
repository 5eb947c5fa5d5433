// ExpertPredictor: which experts a layer will select, from information that
// exists before that layer runs (lookahead).
//
// Cross-layer (predictor "A" of shared/fixtures/trained/README.md): while
// layer l computes, score router_{l+1} · u_l, where u_l = RMSNorm(x)·ffn_norm_l
// is the vector layer l's own router saw, and take each token's top-c experts
// (k <= c <= 2k). Scores are the router's selection scores: softmax gating
// ranks by logit (softmax is monotonic), sigmoid gating by sigmoid(logit) +
// exp_probs_b; ties go to the lower expert id, as in the real top-k.
// Layer 0 of the next step uses the same rule on another input (the
// scheduler passes the last final hidden state or the token embeddings).
//
// Shapes: u is n_tokens rows of n_embd floats (row-major); the result is
// n_tokens rows of c expert ids, best first.
// Thread-safety: thread-compatible (owns scratch).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/matvec.h"
#include "core/model/model.h"
#include "util/status.h"

namespace les::sched {

class ExpertPredictor {
 public:
  // c: candidates per token, clamped to [1, n_expert]. `model` must outlive this.
  ExpertPredictor(const Model& model, int32_t c);

  int32_t c() const noexcept { return c_; }
  // top-c of router_{layer} · u for each of n rows into `out` (n * c ids).
  // Errors: invalid_argument (layer out of range or without a router), from matmul.
  Status predict(int32_t layer, const float* u, int64_t n, std::vector<int32_t>& out);
  // The same for u = layer `from`'s router input (RMSNorm(x)·ffn_norm_from):
  // rescaled by ffn_norm_layer / ffn_norm_from elementwise first, so router_layer
  // sees the residual x normed with its own layer's weights (when both norms
  // are F32 and ffn_norm_from has no zero; else u as is).
  Status predict_from(int32_t layer, int32_t from, const float* u, int64_t n, std::vector<int32_t>& out);
  // The distinct ids of `rows` (n * c), ordered by how many rows name them
  // (then by best rank, then id): the order to prefetch in.
  static std::vector<int32_t> by_votes(const std::vector<int32_t>& rows, int32_t c, int32_t n_expert,
                                       int64_t first_row = 0);

 private:
  const Model& model_;
  int32_t c_;
  std::vector<float> logits_;
  std::vector<float> rescaled_;
  std::vector<std::vector<float>> ratio_;  // per layer l: ffn_norm_l / ffn_norm_{l-1}, empty when unusable
  std::vector<int32_t> order_;
  MatmulScratch ms_;
};

}  // namespace les::sched
