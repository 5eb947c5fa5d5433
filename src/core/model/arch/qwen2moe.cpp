// qwen2moe (Qwen1.5-MoE layout): Q/K/V biases, NEOX RoPE, GQA. Each layer: routed
// experts (softmax over all experts, top-k, NOT renormalised) plus a shared
// SwiGLU expert on the same normed input whose output is multiplied by
// sigmoid(ffn_gate_inp_shexp · x) per token; untied output.
#include "core/model/arch/arch_loaders.h"

namespace les::models {

Status load_qwen2moe(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w) {
  if (!hp.is_moe()) return format_error("missing metadata key 'qwen2moe.expert_count'");
  cfg->rope = ops::RopeType::neox;
  cfg->qk_norm = false;
  cfg->qkv_bias = true;
  cfg->shared_expert = true;
  cfg->shared_expert_gated = true;
  LES_RETURN_IF_ERROR(resolve_moe_config(hp, /*arch_default_renorm=*/false, cfg));
  LES_RETURN_IF_ERROR(load_embeddings(t, hp, /*allow_tied=*/false, w));
  w->layers.resize(static_cast<size_t>(hp.n_layer));
  for (int il = 0; il < hp.n_layer; ++il) {
    LayerWeights& l = w->layers[static_cast<size_t>(il)];
    LES_RETURN_IF_ERROR(load_attention(t, hp, *cfg, il, &l));
    LES_RETURN_IF_ERROR(load_moe_ffn(t, hp, il, &l));
    LES_RETURN_IF_ERROR(load_shared_expert(t, hp, /*gated=*/true, il, &l));
  }
  return Status();
}

}  // namespace les::models
