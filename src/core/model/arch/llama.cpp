// llama: NORM RoPE (adjacent pairs), GQA, no biases, no Q/K norm. Dense SwiGLU
// FFN, or Mixtral-style experts when expert_count > 0 (router softmax over all
// experts, top-k, renormalised; llama.cpp hard-codes the renormalisation).
// Tied embeddings: without output.weight the logits use token_embd.weight.
#include "core/model/arch/arch_loaders.h"

namespace les::models {

Status load_llama(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w) {
  cfg->rope = ops::RopeType::norm;
  cfg->qk_norm = false;
  cfg->qkv_bias = false;
  if (hp.is_moe()) LES_RETURN_IF_ERROR(resolve_moe_config(hp, /*arch_default_renorm=*/true, cfg));
  LES_RETURN_IF_ERROR(load_embeddings(t, hp, /*allow_tied=*/true, w));
  w->layers.resize(static_cast<size_t>(hp.n_layer));
  for (int il = 0; il < hp.n_layer; ++il) {
    LayerWeights& l = w->layers[static_cast<size_t>(il)];
    LES_RETURN_IF_ERROR(load_attention(t, hp, *cfg, il, &l));
    if (hp.is_moe()) {
      LES_RETURN_IF_ERROR(load_moe_ffn(t, hp, il, &l));
    } else {
      LES_RETURN_IF_ERROR(load_dense_ffn(t, hp, il, &l));
    }
  }
  return Status();
}

}  // namespace les::models
