// BatchBytesPredictor: the bytes a batch of tokens would read from the file
// before it runs (speculative decoding's draft length, issue 13: "predicted
// expert union minus what the cache holds, via the lookahead routers").
//
// Before a verify pass no hidden state of its rows exists, so each token t is
// predicted from its embedding alone: for every MoE layer l, the top-k of
// router_l · (RMSNorm(embd(t)) · ffn_norm_l), by the router's own rule
// (ExpertPredictor; layer 0's lookahead uses the same input and is exact up
// to the layer-0 attention's contribution, deeper layers are approximate).
// The draft-length policy divides the measured read wait by these predicted
// bytes (DraftLengthPolicy::wait_seconds_per_byte), so a systematic over- or
// under-estimate is calibrated away; what matters is that the bytes grow
// with the batch's distinct experts and shrink with what the cache holds.
// A token's prediction depends on its id alone: it is memoised (at most
// kMemoTokens tokens, cleared when full), so repeated tokens cost a lookup.
//
// Cost per new token: one router matvec per MoE layer (n_expert x n_embd).
// Thread-safety: thread-compatible (owns scratch; the streaming source calls
// it with its mutex held).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/model/model.h"
#include "sched/expert_predictor.h"
#include "util/status.h"

namespace les::sched {

class BatchBytesPredictor {
 public:
  // Tokens whose predictions are kept (then the memo is cleared).
  static constexpr size_t kMemoTokens = 256;
  // Bytes of scratch and memo a predictor of `model` holds at most.
  static size_t max_bytes(const Model& model) noexcept;

  // `model` must outlive this.
  explicit BatchBytesPredictor(const Model& model);

  // out[j] (out.size() == tokens.size()): the predicted bytes a batch of
  // tokens[0..j] reads: over every layer with routed experts, the distinct
  // predicted experts of those rows that `held(layer, expert)` says are
  // neither cached nor being read, times expert_bytes(layer). Non-decreasing
  // in j. Errors: invalid_argument (a token id outside the vocabulary; out
  // is left zero), from the router matmul.
  Status predict(std::span<const int32_t> tokens, const std::function<bool(int32_t, int32_t)>& held,
                 const std::function<size_t(int32_t)>& expert_bytes, std::span<uint64_t> out);

 private:
  // The n_layer x k predicted experts of `token` (k = n_expert_used; layers
  // without routed experts hold -1).
  Result<const std::vector<int32_t>*> experts_of(int32_t token);

  const Model& model_;
  ExpertPredictor predictor_;  // c = k
  std::vector<float> x_, u_;   // the embedding and one layer's router input
  std::vector<int32_t> ids_;
  std::unordered_map<int32_t, std::vector<int32_t>> memo_;
  std::vector<uint8_t> seen_;  // per (layer, expert) key: in the union so far
};

}  // namespace les::sched
