// The attention mixer of a transformer layer, shared by every architecture
// (ArchConfig selects the variant) and by the MTP block of qwen35moe:
//
//   q, k, v = W_q h, W_k h, W_v h (+ biases)       q: per head [q_h | gate_h] when attn_output_gate
//   per-head RMSNorm of q and k (qk_norm); RoPE (NORM / NEOX, or IMRoPE) at pos0 + t
//   K, V stored at positions pos0 .. pos0 + n - 1 of the cache layer
//   causal GQA attention (attention.h) for rows r0 .. n - 1
//   attn *= sigmoid(gate) (attn_output_gate); out = W_o attn
//
// Summation order of the F16 attention: ggml's GEMM order for batches of >= 2
// tokens, its one-token order otherwise, unless ArchConfig::batch_invariant
// or AttentionLayerScratch::rows_as_decode (always the one-token order).
//
// Shapes: h is n rows of n_embd floats; out rows r0 .. n - 1 of n_embd floats
// are written (rows before r0 are not: llama.cpp's last-layer shortcut).
// Errors: from the matmuls. Thread-safety: thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/attention.h"
#include "core/model/forward_observers.h"
#include "core/model/kv_cache.h"
#include "core/model/model.h"
#include "core/model/weight_matmul.h"

namespace les {

struct AttentionLayerScratch {
  // Compute every row as a one-token decode computes it (the one-token F16
  // summation order even for a batch): a speculative verify pass, whose rows
  // must equal plain decoding bit for bit. Set per decode by the Context.
  bool rows_as_decode = false;
  std::vector<float> qfull, q, gate, k, v, attn;
  AttentionScratch att;
};

// Layer il's weights; K/V go to cache layer kv_layer of `kv` (the trunk uses
// kv_layer = il; an MTP head its own cache). Precondition: kv has room for
// positions up to pos0 + n - 1; 0 <= r0 < n.
// `observers` (may be null) hears the input rows of attn_q/k/v and attn_output.
Status attention_layer(const Model& model, int32_t il, KvCache& kv, int32_t kv_layer, int32_t pos0, const float* h,
                       int64_t n, int64_t r0, float* out, AttentionLayerScratch& s, MatmulScratch& mm,
                       const ForwardObservers* observers = nullptr);

}  // namespace les
