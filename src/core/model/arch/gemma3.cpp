// gemma3 (Gemma 3 text models; llama.cpp 81ff7abe models/gemma3.cpp, HF
// Gemma3ForCausalLM): dense, every layer
//   x += RMSNorm(attention(RMSNorm(x)·attn_norm))·post_attention_norm
//   x += RMSNorm(GeGLU FFN(RMSNorm(x)·ffn_norm))·post_ffw_norm
// with per-head Q/K RMSNorm before NEOX RoPE, Q scaled by
// Hparams::f_attention_scale (query_pre_attn_scalar) before the scores, GQA.
// Token embeddings are multiplied by sqrt(n_embd). Sliding-window layers
// (Hparams::swa_layers: all but every sliding_window_pattern-th, default 6)
// see the last attention.sliding_window keys and use rope.freq_base_swa
// (default 10000) unscaled; the others use rope.freq_base and any rope
// scaling. Logits are softcapped when final_logit_softcapping is set. Norm
// weights are the effective multipliers (the converter stores HF's 1 + w).
// Output is tied to token_embd when output.weight is absent.
#include <cmath>

#include "core/model/arch/arch_loaders.h"

namespace les::models {

Status load_gemma3(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w) {
  if (hp.is_moe()) return unsupported_error("gemma3 with experts (expert_count > 0) is not a Gemma 3 model");
  cfg->rope = ops::RopeType::neox;
  cfg->qk_norm = true;
  cfg->qkv_bias = false;
  cfg->embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
  cfg->post_norms = true;
  cfg->ffn_act = FfnAct::gelu;
  LES_RETURN_IF_ERROR(load_embeddings(t, hp, /*allow_tied=*/true, w));
  w->layers.resize(static_cast<size_t>(hp.n_layer));
  for (int il = 0; il < hp.n_layer; ++il) {
    LayerWeights& l = w->layers[static_cast<size_t>(il)];
    LES_RETURN_IF_ERROR(load_attention(t, hp, *cfg, il, &l));
    LES_ASSIGN_OR_RETURN(l.attn_post_norm,
                         t.require(blk_name(il, "post_attention_norm.weight"), {hp.n_embd}, TypeClass::f32_only));
    LES_RETURN_IF_ERROR(load_dense_ffn(t, hp, il, &l));
    LES_ASSIGN_OR_RETURN(l.ffn_post_norm, t.require(blk_name(il, "post_ffw_norm.weight"), {hp.n_embd}, TypeClass::f32_only));
  }
  return Status();
}

}  // namespace les::models
