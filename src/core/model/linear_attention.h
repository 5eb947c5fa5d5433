// The Gated DeltaNet mixer of a linear-attention layer (qwen35moe), for a
// batch of n tokens of one sequence (docs/model-graphs.md section 4; llama.cpp's
// qwen35moe graph with its fused gated_delta_net op):
//
//   qkv = W_qkv h, z = W_gate h, b = W_beta h, a = W_alpha h        (per token)
//   u   = silu(conv(conv state ; qkv))    causal depthwise conv, d_conv taps;
//                                         the state keeps the last d_conv - 1 raw qkv rows
//   q, k, v = split(u); q, k L2-normalised per head (eps = rms eps)
//   beta = sigmoid(b); decay = exp(softplus(a + dt_bias) * ssm_a)  per v head
//   per v head h (k head h mod n_k_heads), per token in order:
//     S = decay S; delta = beta (v - S^T k); S += k delta^T; o = (S^T q) / sqrt(d_state)
//   o_h = rms_norm(o_h) * ssm_norm * silu(z_h); out = W_out o
//
// The state update runs token by token for every batch size (no chunked
// formulation), so a token's output is bit-identical whether it is decoded
// alone, inside a prefill chunk or in a verify batch, and chunked prefill
// carries the state across chunks exactly. The kernels are
// kernels::OpKernels::{ssm_conv, l2_norm, delta_rule, rms_norm_gated}; the v
// heads are split over the pool (each head by one thread, so the thread count
// does not change results either).
//
// The recurrent state is the sequence's (SequenceState::recurrent): the layer
// reads and writes it through RecurrentState::begin_update and, after a
// checkpoint, journals each token (recurrent_state.h) for rollback.
//
// Shapes: h and out are n rows of n_embd floats. Errors: from the matmuls
// (unsupported weight types). Thread-safety: thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/forward_observers.h"
#include "core/model/model.h"
#include "core/model/sequence_state.h"
#include "core/model/weight_matmul.h"

namespace les {

struct LinearAttnScratch {
  std::vector<float> qkv, z, b, a, window, conv, decay, beta, o, delta;
};

// out = mixer(h) for the n tokens at positions seq.n_past() .. of layer il.
// Precondition: model.weights().layers[il].linear_attn and
// seq.recurrent().is_recurrent(il).
// `observers` (may be null) hears the input rows of attn_qkv, attn_gate, ssm_beta, ssm_alpha and ssm_out.
Status linear_attention(const Model& model, int32_t il, SequenceState& seq, const float* h, int64_t n, float* out,
                        LinearAttnScratch& s, MatmulScratch& ms, const ForwardObservers* observers = nullptr);

}  // namespace les
