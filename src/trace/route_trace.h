// RouteTrace: a recorded expert-routing trace ("route_trace v1", the format
// of docs/model-graphs.md section 7): which experts each layer selected
// for each token, in router order, with the bytes of one expert per layer.
//
// Format: '#' lines are metadata: "# route_trace v1" first, a model line with
// arch=, n_layer=, n_expert=, n_expert_used= (the top-k of the run), one
// "# layer=L expert_bytes=B [dense_bytes=D]" line per layer; other '#' lines
// (summaries) are ignored. Then a CSV header
// "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes" and one
// row per selected expert: phase 0 = prefill, 1 = decode; step = token
// position; slot = rank in router order (0..k-1); weight = gate weight; the
// last two columns describe the recording engine's cache and are ignored.
//
// Rows of one (turn, phase, step, layer) must be contiguous; they form one
// Group. Prefill rows may come layer-major (all tokens of layer 0, then
// layer 1, ...) as a batched prefill records them.
//
// Errors (read_route_trace / parse_route_trace): io (cannot read), format
// with the line number and what was wrong (missing header or model line,
// a field that is not a number, layer / expert / slot out of range, a layer
// without expert_bytes, a group split across the file, no decode rows).
//
// Thread-safety: values; functions are reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace les::trace {

struct RouteGroup {
  int32_t turn = 0;
  int32_t phase = 0;  // 0 prefill, 1 decode
  int32_t step = 0;   // token position
  int32_t layer = 0;
  std::vector<int32_t> experts;  // distinct, router order
  std::vector<float> weights;    // gate weight of each
};

struct RouteTrace {
  std::string arch;
  int32_t n_layer = 0;
  int32_t n_expert = 0;
  int32_t n_expert_used = 0;
  std::vector<size_t> expert_bytes;  // per layer; 0 for a layer with no line
  std::vector<RouteGroup> groups;    // file order

  size_t n_decode_lookups() const noexcept;
  int32_t n_decode_tokens() const noexcept;
  // Bytes of one token's experts: sum over layers of n_expert_used x expert_bytes.
  size_t one_token_bytes() const noexcept;
  size_t max_expert_bytes() const noexcept;
};

Result<RouteTrace> parse_route_trace(std::string_view text, const std::string& name);
Result<RouteTrace> read_route_trace(const std::string& path);

}  // namespace les::trace
