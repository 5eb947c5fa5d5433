#include <cmath>

#include "core/model/arch/arch_loaders.h"

namespace les::models {

Status load_architecture(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w) {
  if (hp.arch == "qwen3moe") return load_qwen3moe(t, hp, cfg, w);
  if (hp.arch == "llama") return load_llama(t, hp, cfg, w);
  if (hp.arch == "qwen2moe") return load_qwen2moe(t, hp, cfg, w);
  if (hp.arch == "qwen35moe") return load_qwen35moe(t, hp, cfg, w);
  if (hp.arch == "gemma3") return load_gemma3(t, hp, cfg, w);
  return unsupported_error("architecture '" + hp.arch +
                           "' is not supported (supported: qwen3moe, llama, qwen2moe, qwen35moe, gemma3)");
}

Status load_embeddings(const TensorLookup& t, const Hparams& hp, bool allow_tied, ModelWeights* w) {
  LES_ASSIGN_OR_RETURN(w->tok_embd, t.require("token_embd.weight", {hp.n_embd, hp.n_vocab}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(w->output_norm, t.require("output_norm.weight", {hp.n_embd}, TypeClass::f32_only));
  if (allow_tied && !t.has("output.weight")) {
    w->output = w->tok_embd;
  } else {
    LES_ASSIGN_OR_RETURN(w->output, t.require("output.weight", {hp.n_embd, hp.n_vocab}, TypeClass::matrix));
  }
  return Status();
}

Status load_attention(const TensorLookup& t, const Hparams& hp, const ArchConfig& cfg, int il, LayerWeights* l) {
  const int64_t e = hp.n_embd;
  LES_ASSIGN_OR_RETURN(l->attn_norm, t.require(blk_name(il, "attn_norm.weight"), {e}, TypeClass::f32_only));
  const int64_t q_rows = cfg.attn_output_gate ? 2 * static_cast<int64_t>(hp.n_embd_q()) : hp.n_embd_q();
  LES_ASSIGN_OR_RETURN(l->wq, t.require(blk_name(il, "attn_q.weight"), {e, q_rows}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->wk, t.require(blk_name(il, "attn_k.weight"), {e, hp.n_embd_k()}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->wv, t.require(blk_name(il, "attn_v.weight"), {e, hp.n_embd_v()}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->wo, t.require(blk_name(il, "attn_output.weight"), {hp.n_head * hp.head_dim_v, e},
                                        TypeClass::matrix));
  if (cfg.qkv_bias) {
    LES_ASSIGN_OR_RETURN(l->bq, t.require(blk_name(il, "attn_q.bias"), {hp.n_embd_q()}, TypeClass::f32_only));
    LES_ASSIGN_OR_RETURN(l->bk, t.require(blk_name(il, "attn_k.bias"), {hp.n_embd_k()}, TypeClass::f32_only));
    LES_ASSIGN_OR_RETURN(l->bv, t.require(blk_name(il, "attn_v.bias"), {hp.n_embd_v()}, TypeClass::f32_only));
  } else if (!cfg.attn_output_gate) {
    // llama.cpp's create_tensor_qkv loads Q/K/V biases for every architecture
    // when the file has them, and build_qkv adds them.
    LES_ASSIGN_OR_RETURN(l->bq, t.optional(blk_name(il, "attn_q.bias"), {hp.n_embd_q()}, TypeClass::f32_only));
    LES_ASSIGN_OR_RETURN(l->bk, t.optional(blk_name(il, "attn_k.bias"), {hp.n_embd_k()}, TypeClass::f32_only));
    LES_ASSIGN_OR_RETURN(l->bv, t.optional(blk_name(il, "attn_v.bias"), {hp.n_embd_v()}, TypeClass::f32_only));
  }
  if (cfg.qk_norm) {
    LES_ASSIGN_OR_RETURN(l->q_norm, t.require(blk_name(il, "attn_q_norm.weight"), {hp.head_dim}, TypeClass::f32_only));
    LES_ASSIGN_OR_RETURN(l->k_norm, t.require(blk_name(il, "attn_k_norm.weight"), {hp.head_dim}, TypeClass::f32_only));
  }
  return Status();
}

Status load_dense_ffn(const TensorLookup& t, const Hparams& hp, int il, LayerWeights* l) {
  const int64_t e = hp.n_embd;
  if (hp.n_ff <= 0) return format_error("missing metadata key '" + hp.arch + ".feed_forward_length'");
  LES_ASSIGN_OR_RETURN(l->ffn_norm, t.require(blk_name(il, "ffn_norm.weight"), {e}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(l->ffn_gate, t.require(blk_name(il, "ffn_gate.weight"), {e, hp.n_ff}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->ffn_up, t.require(blk_name(il, "ffn_up.weight"), {e, hp.n_ff}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->ffn_down, t.require(blk_name(il, "ffn_down.weight"), {hp.n_ff, e}, TypeClass::matrix));
  return Status();
}

Status load_moe_ffn(const TensorLookup& t, const Hparams& hp, int il, LayerWeights* l, const char* norm_name) {
  const int64_t e = hp.n_embd, ne = hp.n_expert, f = hp.n_ff_exp;
  LES_ASSIGN_OR_RETURN(l->ffn_norm, t.require(blk_name(il, norm_name), {e}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(l->router, t.require(blk_name(il, "ffn_gate_inp.weight"), {e, ne}, TypeClass::matrix));
  if (t.contiguous_experts() != nullptr) {
    // `les repack` layout (core/gguf/expert_layout.h): one packed tensor per layer.
    LES_RETURN_IF_ERROR(t.packed_experts(il, &l->gate_exps, &l->up_exps, &l->down_exps));
    const WeightView* v[3] = {&l->gate_exps, &l->up_exps, &l->down_exps};
    const int64_t want[3][2] = {{e, f}, {e, f}, {f, e}};
    for (int k = 0; k < 3; ++k)
      if (v[k]->ne[0] != want[k][0] || v[k]->ne[1] != want[k][1] || v[k]->ne[2] != ne)
        return format_error("packed experts '" + v[k]->name + "' have shape [" + std::to_string(v[k]->ne[0]) + ", " +
                            std::to_string(v[k]->ne[1]) + ", " + std::to_string(v[k]->ne[2]) + "], expected [" +
                            std::to_string(want[k][0]) + ", " + std::to_string(want[k][1]) + ", " +
                            std::to_string(ne) + "]");
    return Status();
  }
  if (!t.has(blk_name(il, "ffn_gate_exps.weight")) && t.has(blk_name(il, "ffn_gate.0.weight")))
    return unsupported_error("tensor '" + blk_name(il, "ffn_gate.0.weight") +
                             "': per-expert tensors (old Mixtral layout) are not supported; expected '" +
                             blk_name(il, "ffn_gate_exps.weight") + "'");
  LES_ASSIGN_OR_RETURN(l->gate_exps, t.require(blk_name(il, "ffn_gate_exps.weight"), {e, f, ne}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->up_exps, t.require(blk_name(il, "ffn_up_exps.weight"), {e, f, ne}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->down_exps, t.require(blk_name(il, "ffn_down_exps.weight"), {f, e, ne}, TypeClass::matrix));
  return Status();
}

Status load_shared_expert(const TensorLookup& t, const Hparams& hp, bool gated, int il, LayerWeights* l) {
  const int64_t e = hp.n_embd, f = hp.n_ff_shexp;
  if (f <= 0) return format_error("missing metadata key '" + hp.arch + ".expert_shared_feed_forward_length'");
  LES_ASSIGN_OR_RETURN(l->gate_shexp, t.require(blk_name(il, "ffn_gate_shexp.weight"), {e, f}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->up_shexp, t.require(blk_name(il, "ffn_up_shexp.weight"), {e, f}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->down_shexp, t.require(blk_name(il, "ffn_down_shexp.weight"), {f, e}, TypeClass::matrix));
  if (gated) {
    LES_ASSIGN_OR_RETURN(l->gate_inp_shexp,
                         t.require(blk_name(il, "ffn_gate_inp_shexp.weight"), {e}, TypeClass::matrix));
  }
  return Status();
}

Status resolve_moe_config(const Hparams& hp, bool arch_default_renorm, ArchConfig* cfg) {
  cfg->gating = hp.gating;
  cfg->moe_renorm = hp.weights_norm_from_file ? hp.expert_weights_norm : arch_default_renorm;
  const float s = hp.expert_weights_scale;
  if (s < 0.0f) return unsupported_error("metadata key '" + hp.arch + ".expert_weights_scale' is negative");
  cfg->moe_weights_scale = (s == 0.0f || s == 1.0f) ? 0.0f : s;
  return Status();
}

}  // namespace les::models
