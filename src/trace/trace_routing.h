// TraceRouting: a recorded routing trace as the routing of a real forward
// pass (bench_trace's end-to-end mode), and the lookahead predictor modelled
// from a recall figure for it.
//
// The forward pass of a model with the trace's shape (same n_layer and
// n_expert, top-k at least the trace's) computes, for each (token, layer),
// exactly the experts the trace names, with the trace's gate weights, instead
// of its router's choice: apply() is a RoutingOverride (routing_override.h,
// bench only). The caller runs the trace's first turn in order: one prefill
// batch of all its prompt tokens (begin_prefill), then one decode token per
// begin_decode(i), i = 0, 1, ... A prefill (token, layer) the trace lacks
// (its recorder computed only the last prompt token at the last layer, as
// LES does) takes the same layer's experts of the nearest recorded prompt
// token; LES never asks for those rows, so nothing changes.
//
// predict() replaces the lookahead predictor's candidates for a layer
// (StreamingParams::prediction_override): a SimulatedLookahead of the given
// recall names each true expert of that (token, layer) with probability r
// and fills the list to c with other experts (simulated_lookahead.h), drawn
// uniformly or by their popularity in the same layer during the trace's
// prompt (FillerDraw::prompt_popularity: weight 1 + the prompt tokens that
// selected the expert there; the prompt is what a running engine has seen
// before decode, the decode tokens' routing is never used for it).
//
// Errors (create): invalid_argument when the shapes differ (names both), the
// trace's top-k exceeds the model's, or the trace has no prompt or decode
// tokens in its first turn.
//
// Thread-safety: thread-compatible (the forward pass's thread).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/model/routing_override.h"
#include "trace/route_trace.h"
#include "trace/simulated_lookahead.h"
#include "util/status.h"

namespace les::trace {

class TraceRouting {
 public:
  // recall < 0: no predictor model (predict() must not be called); c: the
  // engine's candidates per layer (its prefetch c).
  static Result<std::unique_ptr<TraceRouting>> create(const RouteTrace& trace, int32_t model_n_layer,
                                                      int32_t model_n_expert, int32_t model_n_expert_used,
                                                      double recall, int32_t c, uint64_t seed,
                                                      FillerDraw fillers = FillerDraw::uniform);

  int32_t n_prompt_tokens() const noexcept { return static_cast<int32_t>(prefill_.size()); }
  int32_t n_decode_tokens() const noexcept { return static_cast<int32_t>(decode_.size()); }
  int32_t n_expert_used() const noexcept { return k_; }
  // The next batch is the prompt (n_prompt_tokens rows) / decode token i.
  void begin_prefill() noexcept { decode_index_ = -1; }
  void begin_decode(int32_t i) noexcept { decode_index_ = i; }

  // RoutingOverride: writes the trace's k experts and weights of each row
  // [first_token, first_token + n_tokens) of the current batch; returns k, or
  // -1 when a row or layer is outside the trace (the forward pass fails).
  int32_t apply(const RoutingOverrideRequest& r) const;
  // The simulated predictor's c candidates for `layer` of rows [row0, row0 + n_rows)
  // of the current batch, row-major into ids (n_rows x c).
  void predict(int32_t layer, int64_t row0, int64_t n_rows, std::vector<int32_t>& ids);

 private:
  TraceRouting() = default;
  // The group of (row of the current batch, layer), or null.
  const RouteGroup* group(int64_t row, int32_t layer) const noexcept;

  int32_t n_layer_ = 0, k_ = 0, c_ = 0;
  // [token][layer] -> group in the trace (never null after create)
  std::vector<std::vector<const RouteGroup*>> prefill_, decode_;
  int32_t decode_index_ = -1;
  std::unique_ptr<SimulatedLookahead> sim_;
  std::vector<std::vector<double>> filler_weight_;  // [layer][expert]; empty: uniform fillers
  std::vector<int32_t> cand_;
  RouteTrace trace_;  // owns the groups pointed to (kept by value: the caller's may go)
};

}  // namespace les::trace
