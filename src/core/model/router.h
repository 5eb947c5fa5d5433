// The router of one MoE layer: which experts each token uses and with what
// weights. One rule for everyone who needs the router's choice: the MoE layer
// (moe_layer.h) routes with it, and the lookahead predictor (src/sched) ranks
// its candidates with the same probabilities and top-k, so a prediction is
// the real router's choice whenever its input is the real router input.
//
// Semantics (llama.cpp's build_moe_ffn; docs/model-graphs.md section 3):
//   logits = W_router · x                     (router {n_embd, n_expert} of any matrix type, as mul_mat)
//   p      = softmax(logits) | sigmoid(logits) over all n_expert (ArchConfig::gating)
//   sel    = the k experts of largest selection score p[e] + exp_probs_b[e]
//            (bias optional), descending; ties to the lower id
//   w_j    = p[sel_j] (without the bias); if renorm: w_j /= max(sum_j w_j, 6.1035e-5);
//            if scale != 0: w_j *= scale
//
// Shapes: x is n rows of n_embd floats (row-major); probs n x n_expert;
// selected and weights n x k (row t at t * k).
// Thread-safety: a Router is immutable (views into the model); route() and
// the per-row functions are reentrant given distinct outputs and scratch.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/model.h"
#include "core/model/weight_matmul.h"
#include "util/status.h"

namespace les {

// What route() decided for n tokens; also its scratch (reused across calls).
struct RouterOutput {
  std::vector<float> probs;       // n x n_expert: gating probabilities
  std::vector<int32_t> selected;  // n x k: expert ids, best first
  std::vector<float> weights;     // n x k: the selected experts' final weights
  std::vector<float> score;       // scratch: one row's selection scores
  std::vector<int32_t> order;     // scratch: expert ids being ranked
};

class Router {
 public:
  // The router of MoE layer `layer`. Errors: invalid_argument (layer out of
  // range, or a dense layer without ffn_gate_inp).
  static Result<Router> of(const Model& model, int32_t layer);

  int32_t n_expert() const noexcept { return n_expert_; }

  // probs (n x n_expert) = gate(W_router · x). Errors: those of matmul.
  Status probs(const float* x, int64_t n, float* probs, MatmulScratch& ms) const;
  // The k (1 <= k <= n_expert) experts of one token (`probs`: its n_expert
  // probabilities) with the largest selection score, best first, into ids[k].
  void top_k_experts(const float* probs, int32_t k, int32_t* ids, RouterOutput& scratch) const;
  // The final weights of one token's k selected experts into w[k].
  void expert_weights(const float* probs, const int32_t* ids, int32_t k, float* w) const;
  // All of it for n tokens and the model's k: out.probs, out.selected, out.weights.
  // Errors: those of matmul.
  Status route(const float* x, int64_t n, RouterOutput& out, MatmulScratch& ms) const;

 private:
  Router(const LayerWeights& l, const ArchConfig& cfg, int32_t n_expert, int32_t n_expert_used);
  const WeightView* w_;      // ffn_gate_inp
  const float* bias_;        // exp_probs_b, or null
  ExpertGating gating_;
  bool renorm_;
  float scale_;
  int32_t n_expert_;
  int32_t n_expert_used_;
};

}  // namespace les
