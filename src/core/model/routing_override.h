// The bench-only routing override: a forward pass that computes the experts
// a recorded trace names instead of its routers' choice (bench_trace's
// end-to-end mode, src/trace/trace_routing.h). Unlike the observers
// (forward_observers.h) it changes the computation, so it is passed apart
// from them (forward_batch, ffn_forward) and set only through
// Context::set_routing_override; neither les.h nor the tools reach it (the
// test trace/test_trace_routing.cpp checks that).
//
// Thread-safety: called on the thread that runs the forward pass; pointers in
// a request are valid only during the call.
#pragma once

#include <cstdint>
#include <functional>

namespace les {

// Bench only (bench_trace's end-to-end mode replays recorded routing through
// a real forward pass; never set through les.h or les run): replaces one MoE
// layer's router choice. `selected` / `weights` hold the router's n_tokens x k
// choice (k = n_expert_used); the override may rewrite them as n_tokens x k'
// (k' <= k; ids in [0, n_expert), distinct within a token; the weights are
// used as they are) and returns k', or 0 to keep the router's choice, or a
// negative value to fail the forward pass. `first_token` is the index in the
// batch of the first row (the last layer may route only the last row).
struct RoutingOverrideRequest {
  int32_t layer = 0;
  int32_t first_token = 0;
  int64_t n_tokens = 0;
  int32_t n_expert = 0;
  int32_t k = 0;
  int32_t* selected = nullptr;
  float* weights = nullptr;
};
using RoutingOverride = std::function<int32_t(const RoutingOverrideRequest&)>;

}  // namespace les
