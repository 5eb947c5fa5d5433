// The feed-forward part of a transformer layer: dense SwiGLU FFN, or MoE
// (router + top-k routed experts + optional gated shared expert), shared by
// all architectures.
//
// MoE semantics (llama.cpp's build_moe_ffn, fixtures README section 6):
//   logits = W_router · h                     (F32 router, F32 activations)
//   p      = softmax(logits) | sigmoid(logits) over all n_expert
//   sel    = top-k of (p + exp_probs_b) descending; ties to the lower id
//   w_j    = p[sel_j]; if renorm: w_j /= max(sum_j w_j, 6.1035e-5); if scale: w_j *= scale
//   out    = sum_j w_j · down_j(silu(gate_j(h)) ⊙ up_j(h))   (summed in slot order j = 0..k-1)
//   shared: out += sigmoid(ffn_gate_inp_shexp · h) · down_s(silu(gate_s(h)) ⊙ up_s(h))
//
// Shapes: h and out are n_tokens rows of n_embd floats (row-major).
// Thread-safety: thread-compatible (scratch per caller).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/model/expert_source.h"
#include "core/model/forward_observers.h"
#include "core/model/matvec.h"
#include "core/model/model.h"

namespace les {

struct FfnScratch {
  std::vector<float> logits, probs, sel_score, weights, gathered, gate, up, down, slot_out, shared;
  std::vector<int32_t> selected;
  // Running sums the caller resets: distinct routed experts the MoE layers
  // used (once per layer per call, however many rows selected them) and
  // their bytes (gate + up + down).
  int64_t union_experts = 0;
  uint64_t union_bytes = 0;
};

// out = FFN(h) for layer `il`, telling `observers` (may be null) the router's
// decisions and each matrix's input. Errors: from the expert source, unsupported weight types.
Status ffn_forward(const Model& model, int32_t il, ExpertSource& experts, const float* h, int64_t n_tokens,
                   int32_t first_token, float* out, FfnScratch& s, MatmulScratch& ms,
                   const ForwardObservers* observers);

}  // namespace les
