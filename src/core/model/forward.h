// One forward pass of a batch of tokens through a decoder-only model (shared
// by every architecture; ArchConfig and LayerWeights select the variant).
//
// Per trunk layer (pre-norm): h = RMSNorm(x)·attn_norm; x += mixer(h), where
// the mixer is attention (attention_layer.h: K/V appended to the sequence's
// KV cache) or, for a linear-attention layer of a hybrid model, the Gated
// DeltaNet (linear_attention.h: the sequence's recurrent state updated);
// h = RMSNorm(x)·ffn_norm; x += FFN(h) (moe_layer.h). Then
// logits = W_out·(RMSNorm(x)·output_norm). MTP blocks are not run here
// (mtp_head.h runs them). Variants (ArchConfig): token embeddings scaled by
// embd_scale; sandwich norms (mixer and FFN outputs RMS-normed with
// attn_post_norm / ffn_post_norm before the adds); logits softcapped by
// Hparams::final_logit_softcapping (c tanh(logits / c)).
// Like llama.cpp, the last layer computes its attention output and FFN only
// for the rows whose logits (or hidden rows) are wanted (saves work; does not
// change them).
//
// Thread-safety: thread-compatible (state and scratch belong to the caller).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/model/attention_layer.h"
#include "core/model/linear_attention.h"
#include "core/model/model.h"
#include "core/model/moe_layer.h"
#include "core/model/routing_override.h"
#include "core/model/sequence_state.h"
#include "core/model/weight_matmul.h"

namespace les {

struct ForwardScratch {
  std::vector<float> x, h, o;
  AttentionLayerScratch attn;
  LinearAttnScratch lin;
  FfnScratch ffn;
  MatmulScratch mm;
};

// The token id of a row whose input is an embedding row given by the caller
// (image embeddings from a vision projector) instead of a token_embd row.
inline constexpr int32_t kEmbeddingToken = -1;

// Runs `tokens` (already validated: ids in range or kEmbeddingToken, room in
// `seq`) at positions seq.n_past().., writing the sequence state
// (seq.n_past() is NOT advanced). A row whose id is kEmbeddingToken takes the
// next row of `embd` (n_embd floats each, in order) as its input instead of
// the token embedding; `embd` must hold one row per such id (internal error
// when it is null).
// logits: if all_rows, tokens.size() x n_vocab floats, else n_vocab floats of
// the last token. hidden: null, or tokens.size() x n_embd floats that receive
// every token's final hidden state after output_norm (the row the LM head
// multiplies; an MTP head's input). `observers` (may be null) hears every
// router decision and, per weight matrix, its input rows (the last layer's
// attention output and FFN only for the rows computed). `routing_override`
// (bench only, routing_override.h; may be null) replaces the routers' choice.
Status forward_batch(const Model& model, SequenceState& seq, ExpertSource& experts, std::span<const int32_t> tokens,
                     bool all_rows, float* logits, ForwardScratch& s, const ForwardObservers* observers,
                     float* hidden = nullptr, const float* embd = nullptr,
                     const RoutingOverride* routing_override = nullptr);

}  // namespace les
