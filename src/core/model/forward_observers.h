// Hooks a forward pass calls while it runs, for tests and statistics: what
// each MoE router decided, and what enters each weight matrix (the inputs an
// importance matrix accumulates). Both are optional; with neither set the
// forward pass does no extra work. Observers only observe: what changes the
// computation (the bench's routing override) is routing_override.h.
//
// Thread-safety: called on the thread that runs the forward pass; pointers in
// an observation are valid only during the call.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/model/tensor_lookup.h"

namespace les {

// What the router of one layer decided for a batch.
struct RouterObservation {
  int32_t layer = 0;
  int32_t first_token = 0;   // index in the decoded batch of the first routed token
  int32_t n_tokens = 0;      // routed tokens (rows below)
  int32_t n_expert = 0;
  int32_t n_expert_used = 0;
  const float* probs = nullptr;      // n_tokens x n_expert: softmax/sigmoid over all experts
  const int32_t* selected = nullptr; // n_tokens x n_expert_used: expert ids, descending
  const float* weights = nullptr;    // n_tokens x n_expert_used: final weights (after renorm/scale)
};
using RouterObserver = std::function<void(const RouterObservation&)>;

// The activations one weight matrix multiplies: n_rows rows of n_cols floats
// (row-major; n_cols = the matrix's input width). `tensor` is the weight's
// GGUF name ("blk.3.attn_q.weight", "output.weight") whatever the file's
// expert layout; for a routed expert tensor (blk.N.ffn_{gate,up,down}_exps.weight)
// `expert` is the expert id and the rows are the tokens routed to it, else -1.
struct ActivationObservation {
  const char* tensor = nullptr;
  int32_t expert = -1;
  const float* x = nullptr;
  int64_t n_rows = 0;
  int64_t n_cols = 0;
};
using ActivationObserver = std::function<void(const ActivationObservation&)>;

struct ForwardObservers {
  RouterObserver router;
  ActivationObserver activations;
};

// Calls obs->activations (when set) for the input of blk.<layer>.<suffix>
// (layer < 0: the tensor `suffix` itself, e.g. "output.weight").
inline void observe_input(const ForwardObservers* obs, int32_t layer, const char* suffix, int32_t expert,
                          const float* x, int64_t n_rows, int64_t n_cols) {
  if (obs == nullptr || !obs->activations || n_rows <= 0) return;
  const std::string name = layer >= 0 ? blk_name(layer, suffix) : std::string(suffix);
  obs->activations(ActivationObservation{name.c_str(), expert, x, n_rows, n_cols});
}

}  // namespace les
