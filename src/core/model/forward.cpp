#include "core/model/forward.h"

#include <cmath>
#include <cstring>

#include "kernels/ops.h"

namespace les {
namespace {

const float* f32(const WeightView& w) { return reinterpret_cast<const float*>(w.data); }

// Rows r0..n-1 of y (n_embd wide) RMS-normed in place with weight w (sandwich norms).
void post_norm(float* y, int64_t r0, int64_t n, int64_t E, const WeightView& w, float eps) {
  for (int64_t t = r0; t < n; ++t) ops::rms_norm(y + t * E, f32(w), E, eps, y + t * E);
}

// x -> c * tanh(x / c), as llama.cpp's graph: ggml_scale by 1/c, ggml_tanh, ggml_scale by c.
void softcap(float* x, int64_t n, float c) {
  const float inv = 1.0f / c;
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i] * inv) * c;
}

}  // namespace

Status forward_batch(const Model& model, SequenceState& seq, ExpertSource& experts, std::span<const int32_t> tokens,
                     bool all_rows, float* logits, ForwardScratch& s, const ForwardObservers* observers, float* hidden,
                     const float* embd, const RoutingOverride* routing_override) {
  const Hparams& hp = model.hparams();
  const ModelWeights& W = model.weights();
  const ArchConfig& cfg = model.config();
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t E = hp.n_embd;
  const int32_t pos0 = seq.n_past();

  s.x.resize(static_cast<size_t>(n * E));
  s.h.resize(static_cast<size_t>(n * E));
  s.o.resize(static_cast<size_t>(n * E));

  for (int64_t t = 0; t < n; ++t) {
    if (tokens[t] != kEmbeddingToken) {
      float* xt = s.x.data() + t * E;
      LES_RETURN_IF_ERROR(dequantize_row(W.tok_embd, tokens[t], xt));
      if (cfg.embd_scale != 0.0f)
        for (int64_t i = 0; i < E; ++i) xt[i] *= cfg.embd_scale;
      continue;
    }
    if (embd == nullptr) return internal_error("forward: an embedding row without embeddings");
    std::memcpy(s.x.data() + t * E, embd, static_cast<size_t>(E) * sizeof(float));
    embd += E;
  }
  ExpertBatch batch(experts, s.x.data(), n, E);  // ends the batch on every return

  const bool every_row = all_rows || hidden != nullptr;
  for (int32_t il = 0; il < hp.n_layer; ++il) {
    const LayerWeights& l = W.layers[static_cast<size_t>(il)];
    // First active row: only the last row matters after the last layer's mixer.
    const int64_t r0 = il == hp.n_layer - 1 && !every_row ? n - 1 : 0;
    for (int64_t t = 0; t < n; ++t) ops::rms_norm(s.x.data() + t * E, f32(l.attn_norm), E, hp.rms_eps, s.h.data() + t * E);
    if (l.linear_attn) {
      // The recurrent state needs every row.
      LES_RETURN_IF_ERROR(linear_attention(model, il, seq, s.h.data(), n, s.o.data(), s.lin, s.mm, observers));
    } else {
      LES_RETURN_IF_ERROR(
          attention_layer(model, il, seq.kv(), il, pos0, s.h.data(), n, r0, s.o.data(), s.attn, s.mm, observers));
    }
    if (cfg.post_norms) post_norm(s.o.data(), r0, n, E, l.attn_post_norm, hp.rms_eps);
    for (int64_t i = r0 * E; i < n * E; ++i) s.x[i] += s.o[i];
    for (int64_t t = r0; t < n; ++t) ops::rms_norm(s.x.data() + t * E, f32(l.ffn_norm), E, hp.rms_eps, s.h.data() + t * E);
    LES_RETURN_IF_ERROR(ffn_forward(model, il, experts, s.h.data() + r0 * E, n - r0, static_cast<int32_t>(r0),
                                    s.o.data() + r0 * E, s.ffn, s.mm, observers, routing_override));
    if (cfg.post_norms) post_norm(s.o.data(), r0, n, E, l.ffn_post_norm, hp.rms_eps);
    for (int64_t i = r0 * E; i < n * E; ++i) s.x[i] += s.o[i];
  }
  const int64_t norm0 = every_row ? 0 : n - 1;
  for (int64_t t = norm0; t < n; ++t) ops::rms_norm(s.x.data() + t * E, f32(W.output_norm), E, hp.rms_eps, s.h.data() + t * E);
  if (hidden != nullptr) std::memcpy(hidden, s.h.data(), static_cast<size_t>(n * E) * sizeof(float));
  batch.finish(s.h.data() + (n - 1) * E, E);
  const int64_t out0 = all_rows ? 0 : n - 1;
  observe_input(observers, -1, "output.weight", -1, s.h.data() + out0 * E, n - out0, E);
  LES_RETURN_IF_ERROR(matmul(W.output, s.h.data() + out0 * E, n - out0, logits, s.mm));
  if (hp.final_logit_softcapping > 0.0f) softcap(logits, (n - out0) * static_cast<int64_t>(hp.n_vocab), hp.final_logit_softcapping);
  return Status();
}

}  // namespace les
