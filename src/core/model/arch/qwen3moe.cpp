// qwen3moe (Qwen3-30B-A3B layout): per-head Q/K RMSNorm before NEOX RoPE, GQA,
// head_dim from attention.key_length, no biases; every layer MoE with a router
// over all experts (softmax unless expert_gating_func says otherwise), top-k,
// the k weights renormalised to sum 1 (llama.cpp hard-codes this for qwen3moe),
// no shared expert; untied output.
#include "core/model/arch/arch_loaders.h"

namespace les::models {

Status load_qwen3moe(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w) {
  if (!hp.is_moe()) return format_error("missing metadata key 'qwen3moe.expert_count'");
  cfg->rope = ops::RopeType::neox;
  cfg->qk_norm = true;
  cfg->qkv_bias = false;
  LES_RETURN_IF_ERROR(resolve_moe_config(hp, /*arch_default_renorm=*/true, cfg));
  LES_RETURN_IF_ERROR(load_embeddings(t, hp, /*allow_tied=*/false, w));
  w->layers.resize(static_cast<size_t>(hp.n_layer));
  for (int il = 0; il < hp.n_layer; ++il) {
    LayerWeights& l = w->layers[static_cast<size_t>(il)];
    LES_RETURN_IF_ERROR(load_attention(t, hp, *cfg, il, &l));
    LES_RETURN_IF_ERROR(load_moe_ffn(t, hp, il, &l));
  }
  return Status();
}

}  // namespace les::models
