// The feed-forward part of a transformer layer: dense SwiGLU FFN, or MoE
// (router + top-k routed experts + optional gated shared expert), shared by
// all architectures.
//
// MoE, in order (llama.cpp's build_moe_ffn, docs/model-graphs.md section 3):
//   route        probabilities, top-k selection and weights (router.h)
//   group        each expert's (token, slot) entries
//   run experts  ExpertSource::prepare, on_routed, then ready-first:
//                row (t, j) = w_j · down_j(silu(gate_j(h_t)) ⊙ up_j(h_t))
//   sum slots    out_t = sum over j = 0..k-1 in slot order (bit-identical
//                whatever order the experts became ready in)
//   shared       out += sigmoid(ffn_gate_inp_shexp · h) · down_s(silu(gate_s(h)) ⊙ up_s(h))
//                (the gate only when the model has ffn_gate_inp_shexp)
//
// Shapes: h and out are n_tokens rows of n_embd floats (row-major).
// Thread-safety: thread-compatible (scratch per caller).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/expert_source.h"
#include "core/model/forward_observers.h"
#include "core/model/routing_override.h"
#include "core/model/model.h"
#include "core/model/router.h"
#include "core/model/weight_matmul.h"

namespace les {

// Each routed expert's (token, slot) entries t * k + slot, and the experts used.
struct ExpertGroups {
  std::vector<std::vector<int32_t>> rows;  // per expert id, ascending entries
  std::vector<int32_t> used;               // experts with at least one entry, ascending
};

struct FfnScratch {
  RouterOutput route;
  ExpertGroups groups;
  std::vector<float> gathered, gate, up, down, slot_out, shared;
  // The grouped path (all experts of a layer at once): h quantised once, its
  // rows gathered per expert, the down input quantised once, each expert's
  // matrices and rows.
  std::vector<uint8_t> xq_h, xq_rows, xq_down;
  std::vector<ExpertMatrices> mats;
  std::vector<int64_t> first_row;
  // Running sums the caller resets: distinct routed experts the MoE layers
  // used (once per layer per call, however many rows selected them) and
  // their bytes (gate + up + down).
  int64_t union_experts = 0;
  uint64_t union_bytes = 0;
};

// out = FFN(h) for layer `il`, telling `observers` (may be null) the router's
// decisions and each matrix's input; `routing_override` (bench only, may be
// null: routing_override.h) replaces the router's choice. Errors: from the
// router (a layer without one), the expert source, unsupported weight types,
// an override's bad answer.
Status ffn_forward(const Model& model, int32_t il, ExpertSource& experts, const float* h, int64_t n_tokens,
                   int32_t first_token, float* out, FfnScratch& s, MatmulScratch& ms,
                   const ForwardObservers* observers, const RoutingOverride* routing_override = nullptr);

}  // namespace les
