// qwen35moe (Qwen3.5-MoE, the text backbone of MiniCPM-V 4.7 35B-A3B; docs/model-graphs.md
// section 4): a hybrid of Gated DeltaNet linear-attention layers
// (Hparams::is_recurrent) and gated full-attention layers (every fourth by
// default: attn_q carries a per-head sigmoid output gate, per-head Q/K RMSNorm,
// IMRoPE on the first rope.dimension_count dims). Every layer: the FFN input
// norm is post_attention_norm, then routed experts (softmax over all experts,
// top-k, renormalised: llama.cpp hard-codes the renormalisation) plus a shared
// SwiGLU expert scaled by sigmoid(ffn_gate_inp_shexp · x). Output falls back to
// token_embd when output.weight is absent (as llama.cpp loads it).
// block_count includes nextn_predict_layers MTP blocks after the trunk: each
// is a full-attention layer plus MoE with the NextN tensors (NextnWeights);
// llama.cpp at the fixtures' commit supports one, and so does LES.
#include "core/model/arch/arch_loaders.h"

namespace les::models {
namespace {

Status load_linear_attention(const TensorLookup& t, const Hparams& hp, int il, LinearAttnWeights* l) {
  const int64_t e = hp.n_embd, c = hp.ssm_conv_channels(), vi = hp.ssm_d_inner, nv = hp.ssm_dt_rank;
  LES_ASSIGN_OR_RETURN(l->wqkv, t.require(blk_name(il, "attn_qkv.weight"), {e, c}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->wgate, t.require(blk_name(il, "attn_gate.weight"), {e, vi}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->conv1d, t.require(blk_name(il, "ssm_conv1d.weight"), {hp.ssm_d_conv, c}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(l->dt_bias, t.require(blk_name(il, "ssm_dt.bias"), {nv}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(l->a, t.require(blk_name(il, "ssm_a"), {nv}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(l->wbeta, t.require(blk_name(il, "ssm_beta.weight"), {e, nv}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->walpha, t.require(blk_name(il, "ssm_alpha.weight"), {e, nv}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(l->norm, t.require(blk_name(il, "ssm_norm.weight"), {hp.ssm_d_state}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(l->wout, t.require(blk_name(il, "ssm_out.weight"), {vi, e}, TypeClass::matrix));
  return Status();
}

Status load_nextn(const TensorLookup& t, const Hparams& hp, int il, NextnWeights* n) {
  const int64_t e = hp.n_embd;
  LES_ASSIGN_OR_RETURN(n->eh_proj, t.require(blk_name(il, "nextn.eh_proj.weight"), {2 * e, e}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(n->enorm, t.require(blk_name(il, "nextn.enorm.weight"), {e}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(n->hnorm, t.require(blk_name(il, "nextn.hnorm.weight"), {e}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(n->shared_head_norm,
                       t.optional(blk_name(il, "nextn.shared_head_norm.weight"), {e}, TypeClass::f32_only));
  LES_ASSIGN_OR_RETURN(n->embed_tokens,
                       t.optional(blk_name(il, "nextn.embed_tokens.weight"), {e, hp.n_vocab}, TypeClass::matrix));
  LES_ASSIGN_OR_RETURN(n->shared_head_head,
                       t.optional(blk_name(il, "nextn.shared_head_head.weight"), {e, hp.n_vocab}, TypeClass::matrix));
  return Status();
}

}  // namespace

Status load_qwen35moe(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w) {
  if (!hp.is_moe()) return format_error("missing metadata key 'qwen35moe.expert_count'");
  if (!hp.is_hybrid()) return format_error("missing metadata key 'qwen35moe.ssm.state_size'");
  if (hp.rope_sections[0] + hp.rope_sections[1] + hp.rope_sections[2] + hp.rope_sections[3] == 0)
    return format_error("missing metadata key 'qwen35moe.rope.dimension_sections'");
  if (hp.head_dim != hp.head_dim_v)
    return format_error("qwen35moe needs attention.key_length == attention.value_length (" +
                        std::to_string(hp.head_dim) + " vs " + std::to_string(hp.head_dim_v) + ")");
  if (hp.n_layer_nextn > 1)
    return unsupported_error("qwen35moe with " + std::to_string(hp.n_layer_nextn) +
                             " MTP blocks (nextn_predict_layers): one is supported");
  if (hp.n_ff_shexp <= 0) return format_error("missing metadata key 'qwen35moe.expert_shared_feed_forward_length'");
  cfg->rope = ops::RopeType::neox;
  cfg->rope_imrope = true;
  cfg->qk_norm = true;
  cfg->qkv_bias = false;
  cfg->attn_output_gate = true;
  cfg->batch_invariant = true;
  cfg->shared_expert = true;
  cfg->shared_expert_gated = true;
  LES_RETURN_IF_ERROR(resolve_moe_config(hp, /*arch_default_renorm=*/true, cfg));
  LES_RETURN_IF_ERROR(load_embeddings(t, hp, /*allow_tied=*/true, w));
  w->layers.resize(static_cast<size_t>(hp.n_layer_all));
  for (int il = 0; il < hp.n_layer_all; ++il) {
    LayerWeights& l = w->layers[static_cast<size_t>(il)];
    if (hp.is_recurrent(il)) {
      l.linear_attn = true;
      LES_ASSIGN_OR_RETURN(l.attn_norm, t.require(blk_name(il, "attn_norm.weight"), {hp.n_embd}, TypeClass::f32_only));
      LES_RETURN_IF_ERROR(load_linear_attention(t, hp, il, &l.lin));
    } else {
      LES_RETURN_IF_ERROR(load_attention(t, hp, *cfg, il, &l));
    }
    LES_RETURN_IF_ERROR(load_moe_ffn(t, hp, il, &l, "post_attention_norm.weight"));
    LES_RETURN_IF_ERROR(load_shared_expert(t, hp, /*gated=*/true, il, &l));
    if (il >= hp.n_layer) LES_RETURN_IF_ERROR(load_nextn(t, hp, il, &l.nextn));
  }
  return Status();
}

}  // namespace les::models
