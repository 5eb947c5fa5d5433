#include "core/model/attention_layer.h"

#include <cstring>

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

Status attention_layer(const Model& model, int32_t il, KvCache& kv, int32_t kv_layer, int32_t pos0, const float* h,
                       int64_t n, int64_t r0, float* out, AttentionLayerScratch& s, MatmulScratch& mm,
                       const ForwardObservers* observers) {
  const Hparams& hp = model.hparams();
  const ArchConfig& cfg = model.config();
  const LayerWeights& l = model.weights().layers[static_cast<size_t>(il)];
  const int64_t E = hp.n_embd, Dq = hp.n_embd_q(), Dk = hp.n_embd_k(), Dv = hp.n_embd_v();
  const int64_t Da = static_cast<int64_t>(hp.n_head) * hp.head_dim_v;  // attention output width
  const int hd = hp.head_dim;

  s.q.resize(static_cast<size_t>(n * Dq));
  s.k.resize(static_cast<size_t>(n * Dk));
  s.v.resize(static_cast<size_t>(n * Dv));
  s.attn.resize(static_cast<size_t>(n * Da));
  for (const char* w : {"attn_q.weight", "attn_k.weight", "attn_v.weight"}) observe_input(observers, il, w, -1, h, n, E);
  // Q (or Q with its gate), K and V read the same rows: one quantisation, one fork-join.
  const WeightView* qkv[] = {&l.wq, &l.wk, &l.wv};
  if (cfg.attn_output_gate) {
    // Rows per head [q_h | gate_h]: split into q and gate, each n x Dq.
    s.qfull.resize(static_cast<size_t>(n * 2 * Dq));
    s.gate.resize(static_cast<size_t>(n * Dq));
    float* const out[] = {s.qfull.data(), s.k.data(), s.v.data()};
    LES_RETURN_IF_ERROR(matmul_shared_input(qkv, out, 3, h, n, mm));
    for (int64_t t = 0; t < n; ++t)
      for (int hh = 0; hh < hp.n_head; ++hh) {
        const float* src = s.qfull.data() + t * 2 * Dq + static_cast<int64_t>(hh) * 2 * hd;
        std::memcpy(s.q.data() + t * Dq + static_cast<int64_t>(hh) * hd, src, static_cast<size_t>(hd) * sizeof(float));
        std::memcpy(s.gate.data() + t * Dq + static_cast<int64_t>(hh) * hd, src + hd,
                    static_cast<size_t>(hd) * sizeof(float));
      }
  } else {
    float* const out[] = {s.q.data(), s.k.data(), s.v.data()};
    LES_RETURN_IF_ERROR(matmul_shared_input(qkv, out, 3, h, n, mm));
  }
  add_bias(s.q.data(), n, Dq, l.bq);
  add_bias(s.k.data(), n, Dk, l.bk);
  add_bias(s.v.data(), n, Dv, l.bv);
  const ops::RopeScaling& rs = model.rope_scaling(il);
  for (int64_t t = 0; t < n; ++t) {
    float* qt = s.q.data() + t * Dq;
    float* kt = s.k.data() + t * Dk;
    if (cfg.qk_norm) {
      for (int hh = 0; hh < hp.n_head; ++hh) ops::rms_norm(qt + hh * hd, f32(l.q_norm), hd, hp.rms_eps, qt + hh * hd);
      for (int hh = 0; hh < hp.n_head_kv; ++hh) ops::rms_norm(kt + hh * hd, f32(l.k_norm), hd, hp.rms_eps, kt + hh * hd);
    }
    const int64_t pos = pos0 + t;
    if (cfg.rope_imrope) {
      const int64_t p4[4] = {pos, pos, pos, 0};  // text: one position for t, h and w
      ops::rope_imrope(qt, hp.n_head, hd, hp.n_rot, p4, hp.rope_sections, rs);
      ops::rope_imrope(kt, hp.n_head_kv, hd, hp.n_rot, p4, hp.rope_sections, rs);
    } else {
      ops::rope(qt, hp.n_head, hd, hp.n_rot, pos, rs, cfg.rope);
      ops::rope(kt, hp.n_head_kv, hd, hp.n_rot, pos, rs, cfg.rope);
    }
    kv.store(kv_layer, static_cast<int32_t>(pos), kt, s.v.data() + t * Dv);
  }
  const int64_t m = n - r0;
  AttentionOptions opt;
  if (hp.f_attention_scale != 0.0f) {
    // gemma3 (llama.cpp: Qcur = ggml_scale(Qcur, f_attention_scale), then kq_scale 1): Q scaled before its F16 cast.
    for (int64_t i = r0 * Dq; i < n * Dq; ++i) s.q[static_cast<size_t>(i)] *= hp.f_attention_scale;
    opt.scale = 1.0f;
  }
  if (hp.is_swa(il)) opt.window = hp.n_swa;
  const bool gemm_order = n > 1 && !cfg.batch_invariant && !s.rows_as_decode;
  attention_rows(hp, kv, kv_layer, s.q.data() + r0 * Dq, m, pos0 + r0, gemm_order, s.attn.data() + r0 * Da, s.att,
                 mm.pool, opt);
  if (cfg.attn_output_gate)
    for (int64_t i = r0 * Da; i < n * Da; ++i) s.attn[static_cast<size_t>(i)] *= ops::sigmoid(s.gate[static_cast<size_t>(i)]);
  observe_input(observers, il, "attn_output.weight", -1, s.attn.data() + r0 * Da, m, Da);
  return matmul(l.wo, s.attn.data() + r0 * Da, m, out + r0 * E, mm);
}

}  // namespace les
