// RouteRecorder: what `les run --route-trace FILE` records. Installed as the
// context's route callback (les_activations.h), it keeps each MoE layer's
// router choice per sequence position, and at the end writes them as a
// `route_trace v1` file (the format of docs/model-graphs.md section 7,
// read back by src/trace/route_trace.h):
//   # route_trace v1
//   # model=NAME arch=ARCH n_layer=L n_expert=E n_expert_used=K
//   # layer=l expert_bytes=B            (one per layer; les_model_expert_bytes)
//   turn,phase,step,layer,slot,expert,weight,residency,expert_bytes
//   0,PHASE,POS,LAYER,SLOT,EXPERT,WEIGHT,0,0   (one row per selected expert)
// The prompt's positions (pos < n_prompt) are phase 0, written layer-major
// (layer 0 of every prompt position, then layer 1, ...), the order a batched
// prefill routes them in; the generated tokens' are phase 1, position-major
// (every layer of position p, then p + 1).
// A position routed twice keeps its last routing. A (position, layer) never
// routed (a prefill chunk's last layer routes only its last row) has no rows.
// `les run` refuses --route-trace with speculative decoding: a verify pass
// routes drafts that may be rejected, and a rejected draft's position is
// not always routed again before the run ends. The last two columns describe a recording
// engine's cache in that format; LES writes 0.
//
// Thread-safety: thread-compatible; on() runs on the decoding thread.
#pragma once

#include <les/les.h>

#include <cstdint>
#include <string>
#include <vector>

namespace les::tool {

class RouteRecorder {
 public:
  RouteRecorder(int32_t n_layer, int32_t n_expert, int32_t n_expert_used)
      : n_layer_(n_layer), n_expert_(n_expert), k_(n_expert_used) {}

  // The les_route_callback: `user_data` is a RouteRecorder*.
  static void callback(int32_t layer, int32_t pos, int32_t n_tokens, int32_t n_expert_used, const int32_t* selected,
                       const float* weights, void* user_data);

  // Routed (position, layer) pairs recorded so far.
  int64_t n_groups() const noexcept;
  // One past the last position routed so far.
  int32_t n_positions() const noexcept { return static_cast<int32_t>(routes_.size()); }
  // The first error seen by callback (a layer, position or top-k outside the
  // model's shape); empty when none. Such a call records nothing.
  const std::string& error() const noexcept { return error_; }

  // Writes the trace of positions [0, n_positions), the first n_prompt of
  // them the prompt. model_name goes into the model line (spaces become '_');
  // expert_bytes: one value per layer. Returns "" on success, else a message
  // naming the file and what failed (cannot open / write).
  std::string write(const std::string& path, const std::string& model_name, const std::string& arch,
                    const std::vector<uint64_t>& expert_bytes, int32_t n_prompt, int32_t n_positions) const;

 private:
  struct Route {
    std::vector<int32_t> experts;  // empty: not routed
    std::vector<float> weights;
  };
  void on(int32_t layer, int32_t pos, int32_t n_tokens, int32_t k, const int32_t* selected, const float* weights);

  int32_t n_layer_, n_expert_, k_;
  std::vector<std::vector<Route>> routes_;  // [position][layer]
  std::string error_;
};

}  // namespace les::tool
