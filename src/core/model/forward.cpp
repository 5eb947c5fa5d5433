#include "core/model/forward.h"

#include <cmath>

#include "kernels/ops.h"

namespace les {
namespace {

const float* f32(const WeightView& w) { return reinterpret_cast<const float*>(w.data); }

void add_bias(float* y, int64_t n, int64_t width, const WeightView& b) {
  if (!b.present()) return;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < width; ++i) y[t * width + i] += f32(b)[i];
}

}  // namespace

Status forward_batch(const Model& model, SequenceState& seq, ExpertSource& experts, std::span<const int32_t> tokens,
                     bool all_rows, float* logits, ForwardScratch& s, const RouterObserver* observer) {
  const Hparams& hp = model.hparams();
  const ArchConfig& cfg = model.config();
  const ModelWeights& W = model.weights();
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t E = hp.n_embd, Dq = hp.n_embd_q(), Dk = hp.n_embd_k(), Dv = hp.n_embd_v();
  const int64_t Da = static_cast<int64_t>(hp.n_head) * hp.head_dim_v;  // attention output width
  const int32_t pos0 = seq.n_past();
  KvCache& kv = seq.kv();

  s.x.resize(static_cast<size_t>(n * E));
  s.h.resize(static_cast<size_t>(n * E));
  s.q.resize(static_cast<size_t>(n * Dq));
  s.k.resize(static_cast<size_t>(n * Dk));
  s.v.resize(static_cast<size_t>(n * Dv));
  s.attn.resize(static_cast<size_t>(n * Da));
  s.o.resize(static_cast<size_t>(n * E));

  for (int64_t t = 0; t < n; ++t) LES_RETURN_IF_ERROR(dequantize_row(W.tok_embd, tokens[t], s.x.data() + t * E));
  experts.observe_embeddings(s.x.data(), n, E);

  int64_t r0 = 0;  // first active row (only the last rows matter in the last layer)
  for (int32_t il = 0; il < hp.n_layer; ++il) {
    const LayerWeights& l = W.layers[static_cast<size_t>(il)];
    for (int64_t t = 0; t < n; ++t) ops::rms_norm(s.x.data() + t * E, f32(l.attn_norm), E, hp.rms_eps, s.h.data() + t * E);
    LES_RETURN_IF_ERROR(matmul(l.wq, s.h.data(), n, E, s.q.data(), Dq, s.mm));
    LES_RETURN_IF_ERROR(matmul(l.wk, s.h.data(), n, E, s.k.data(), Dk, s.mm));
    LES_RETURN_IF_ERROR(matmul(l.wv, s.h.data(), n, E, s.v.data(), Dv, s.mm));
    add_bias(s.q.data(), n, Dq, l.bq);
    add_bias(s.k.data(), n, Dk, l.bk);
    add_bias(s.v.data(), n, Dv, l.bv);
    for (int64_t t = 0; t < n; ++t) {
      float* qt = s.q.data() + t * Dq;
      float* kt = s.k.data() + t * Dk;
      if (cfg.qk_norm) {
        for (int h = 0; h < hp.n_head; ++h)
          ops::rms_norm(qt + h * hp.head_dim, f32(l.q_norm), hp.head_dim, hp.rms_eps, qt + h * hp.head_dim);
        for (int h = 0; h < hp.n_head_kv; ++h)
          ops::rms_norm(kt + h * hp.head_dim, f32(l.k_norm), hp.head_dim, hp.rms_eps, kt + h * hp.head_dim);
      }
      const int64_t pos = pos0 + t;
      ops::rope(qt, hp.n_head, hp.head_dim, hp.n_rot, pos, hp.rope_freq_base, cfg.rope);
      ops::rope(kt, hp.n_head_kv, hp.head_dim, hp.n_rot, pos, hp.rope_freq_base, cfg.rope);
      kv.store(il, static_cast<int32_t>(pos), kt, s.v.data() + t * Dv);
    }
    if (il == hp.n_layer - 1 && !all_rows) r0 = n - 1;
    const int64_t m = n - r0;
    attention_rows(hp, kv, il, s.q.data() + r0 * Dq, m, pos0 + r0, n > 1, s.attn.data() + r0 * Da, s.att, s.mm.pool);
    LES_RETURN_IF_ERROR(matmul(l.wo, s.attn.data() + r0 * Da, m, Da, s.o.data() + r0 * E, E, s.mm));
    for (int64_t i = r0 * E; i < n * E; ++i) s.x[i] += s.o[i];
    for (int64_t t = r0; t < n; ++t) ops::rms_norm(s.x.data() + t * E, f32(l.ffn_norm), E, hp.rms_eps, s.h.data() + t * E);
    LES_RETURN_IF_ERROR(ffn_forward(model, il, experts, s.h.data() + r0 * E, m, static_cast<int32_t>(r0),
                                    s.o.data() + r0 * E, s.ffn, s.mm, observer));
    for (int64_t i = r0 * E; i < n * E; ++i) s.x[i] += s.o[i];
  }
  const int64_t out0 = all_rows ? 0 : n - 1;
  for (int64_t t = out0; t < n; ++t) ops::rms_norm(s.x.data() + t * E, f32(W.output_norm), E, hp.rms_eps, s.h.data() + t * E);
  experts.observe_output_hidden(s.h.data() + (n - 1) * E, E);
  return matmul(W.output, s.h.data() + out0 * E, n - out0, E, logits, hp.n_vocab, s.mm);
}

}  // namespace les
