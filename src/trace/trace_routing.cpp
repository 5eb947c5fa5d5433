#include "trace/trace_routing.h"

#include <algorithm>
#include <map>
#include <string>

namespace les::trace {

Result<std::unique_ptr<TraceRouting>> TraceRouting::create(const RouteTrace& trace, int32_t model_n_layer,
                                                           int32_t model_n_expert, int32_t model_n_expert_used,
                                                           double recall, int32_t c, uint64_t seed,
                                                           FillerDraw fillers) {
  if (trace.n_layer != model_n_layer || trace.n_expert != model_n_expert)
    return invalid_argument_error("trace routing: the trace has " + std::to_string(trace.n_layer) + " layers x " +
                                  std::to_string(trace.n_expert) + " experts, the model " +
                                  std::to_string(model_n_layer) + " x " + std::to_string(model_n_expert));
  if (trace.n_expert_used <= 0 || trace.n_expert_used > model_n_expert_used)
    return invalid_argument_error("trace routing: the trace's top-" + std::to_string(trace.n_expert_used) +
                                  " exceeds the model's top-" + std::to_string(model_n_expert_used));
  if (recall > 1 || (recall >= 0 && (c < 1 || c > model_n_expert)))
    return invalid_argument_error("trace routing: recall " + std::to_string(recall) + " / candidates " +
                                  std::to_string(c) + " out of range");
  std::unique_ptr<TraceRouting> r(new TraceRouting());
  r->trace_ = trace;
  r->n_layer_ = trace.n_layer;
  r->k_ = trace.n_expert_used;
  r->c_ = c;
  const int32_t turn = trace.groups.empty() ? 0 : trace.groups.front().turn;
  std::map<int32_t, std::vector<const RouteGroup*>> pre, dec;  // step -> [layer]
  for (const RouteGroup& g : r->trace_.groups) {
    if (g.turn != turn) continue;
    if (static_cast<int32_t>(g.experts.size()) != r->k_)
      return invalid_argument_error("trace routing: step " + std::to_string(g.step) + " layer " +
                                    std::to_string(g.layer) + " names " + std::to_string(g.experts.size()) +
                                    " experts, not the trace's top-" + std::to_string(r->k_));
    auto& row = (g.phase == 0 ? pre : dec)[g.step];
    row.resize(static_cast<size_t>(r->n_layer_), nullptr);
    row[static_cast<size_t>(g.layer)] = &g;
  }
  if (pre.empty() || dec.empty())
    return invalid_argument_error("trace routing: the trace's first turn needs prompt and decode tokens");
  for (auto& [step, row] : pre) r->prefill_.push_back(row);
  for (auto& [step, row] : dec) r->decode_.push_back(row);
  // A prompt (token, layer) without a record takes the nearest recorded token's.
  const size_t np = r->prefill_.size();
  for (size_t l = 0; l < static_cast<size_t>(r->n_layer_); ++l) {
    for (size_t t = 0; t < np; ++t) {
      if (r->prefill_[t][l] != nullptr) continue;
      for (size_t d = 1; d < np && r->prefill_[t][l] == nullptr; ++d) {
        if (t + d < np && r->prefill_[t + d][l] != nullptr) r->prefill_[t][l] = r->prefill_[t + d][l];
        else if (d <= t && r->prefill_[t - d][l] != nullptr) r->prefill_[t][l] = r->prefill_[t - d][l];
      }
      if (r->prefill_[t][l] == nullptr)
        return invalid_argument_error("trace routing: layer " + std::to_string(l) + " has no prompt record");
    }
    for (size_t t = 0; t < r->decode_.size(); ++t)
      if (r->decode_[t][l] == nullptr)
        return invalid_argument_error("trace routing: decode token " + std::to_string(t) + " has no record of layer " +
                                      std::to_string(l));
  }
  if (recall >= 0) r->sim_ = std::make_unique<SimulatedLookahead>(recall, c, trace.n_expert, seed);
  if (fillers == FillerDraw::prompt_popularity) {
    // Recorded prompt tokens only (not the nearest-token fill-ins above).
    r->filler_weight_.assign(static_cast<size_t>(r->n_layer_),
                             std::vector<double>(static_cast<size_t>(trace.n_expert), 1.0));
    for (const auto& [step, row] : pre)
      for (const RouteGroup* g : row)
        if (g != nullptr)
          for (int32_t e : g->experts)
            if (e >= 0 && e < trace.n_expert)
              r->filler_weight_[static_cast<size_t>(g->layer)][static_cast<size_t>(e)] += 1.0;
  }
  return r;
}

const RouteGroup* TraceRouting::group(int64_t row, int32_t layer) const noexcept {
  if (layer < 0 || layer >= n_layer_ || row < 0) return nullptr;
  if (decode_index_ < 0) {
    if (row >= static_cast<int64_t>(prefill_.size())) return nullptr;
    return prefill_[static_cast<size_t>(row)][static_cast<size_t>(layer)];
  }
  if (row != 0 || decode_index_ >= static_cast<int32_t>(decode_.size())) return nullptr;
  return decode_[static_cast<size_t>(decode_index_)][static_cast<size_t>(layer)];
}

int32_t TraceRouting::apply(const RoutingOverrideRequest& r) const {
  if (r.k < k_) return -1;
  for (int64_t t = 0; t < r.n_tokens; ++t) {
    const RouteGroup* g = group(r.first_token + t, r.layer);
    if (g == nullptr) return -1;
    std::copy(g->experts.begin(), g->experts.end(), r.selected + t * k_);
    std::copy(g->weights.begin(), g->weights.end(), r.weights + t * k_);
  }
  return k_;
}

void TraceRouting::predict(int32_t layer, int64_t row0, int64_t n_rows, std::vector<int32_t>& ids) {
  ids.assign(static_cast<size_t>(n_rows * c_), 0);
  for (int64_t t = 0; t < n_rows; ++t) {
    const RouteGroup* g = group(row0 + t, layer);
    if (sim_ == nullptr || g == nullptr) continue;  // rows outside the trace keep expert 0s
    std::span<const double> w;
    if (!filler_weight_.empty()) w = filler_weight_[static_cast<size_t>(layer)];
    sim_->predict(g->experts, cand_, w);
    std::copy_n(cand_.begin(), std::min<size_t>(cand_.size(), static_cast<size_t>(c_)), ids.begin() + t * c_);
  }
}

}  // namespace les::trace
