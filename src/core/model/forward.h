// One forward pass of a batch of tokens through a decoder-only transformer
// (shared by qwen3moe, llama and qwen2moe; ArchConfig selects the variant).
//
// Per layer (pre-norm): h = RMSNorm(x)·attn_norm; q,k,v = W·h (+bias);
// [per-head RMSNorm of q,k]; RoPE(q,k) at positions n_past..; K,V appended to the
// KV cache (F16 or Q8_0); causal GQA attention (attention.h, split over s.mm.pool); x += Wo·attn; h = RMSNorm(x)·ffn_norm;
// x += FFN(h) (moe_layer.h). Then logits = W_out·(RMSNorm(x)·output_norm).
// Like llama.cpp, the last layer computes attention output and FFN only for the
// rows whose logits are wanted (saves work; does not change logits).
//
// Thread-safety: thread-compatible (state and scratch belong to the caller).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/model/attention.h"
#include "core/model/sequence_state.h"
#include "core/model/matvec.h"
#include "core/model/model.h"
#include "core/model/moe_layer.h"

namespace les {

struct ForwardScratch {
  std::vector<float> x, h, q, k, v, attn, o;
  AttentionScratch att;
  FfnScratch ffn;
  MatmulScratch mm;
};

// Runs `tokens` (already validated: ids in range, room in `seq`) at positions
// seq.n_past().., writing K/V into seq's cache (seq.n_past() is NOT advanced).
// logits: if all_rows, tokens.size() x n_vocab floats, else n_vocab floats of the last token.
Status forward_batch(const Model& model, SequenceState& seq, ExpertSource& experts, std::span<const int32_t> tokens,
                     bool all_rows, float* logits, ForwardScratch& s, const RouterObserver* observer);

}  // namespace les
