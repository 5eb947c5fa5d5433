// llama: NORM RoPE (adjacent pairs), GQA, no biases, no Q/K norm. Dense SwiGLU
// FFN, or Mixtral-style experts when expert_count > 0 (router softmax over all
// experts, top-k, renormalised; llama.cpp hard-codes the renormalisation).
// Tied embeddings: without output.weight the logits use token_embd.weight.
// Optional rope_freqs.weight (Llama 3.x) divides each pair's RoPE angle.
#include "core/model/arch/arch_loaders.h"

namespace les::models {

Status load_llama(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w) {
  if (hp.n_rot != hp.head_dim)  // llama.cpp: "invalid n_rot"
    return unsupported_error("metadata key 'llama.rope.dimension_count' = " + std::to_string(hp.n_rot) +
                             ": llama rotates the whole head (" + std::to_string(hp.head_dim) + " dims)");
  if (hp.head_dim != hp.head_dim_v)
    return unsupported_error("llama needs attention.key_length == attention.value_length (" +
                             std::to_string(hp.head_dim) + " vs " + std::to_string(hp.head_dim_v) + ")");
  cfg->rope = ops::RopeType::norm;
  cfg->qk_norm = false;
  cfg->qkv_bias = false;
  if (hp.is_moe()) LES_RETURN_IF_ERROR(resolve_moe_config(hp, /*arch_default_renorm=*/true, cfg));
  LES_RETURN_IF_ERROR(load_embeddings(t, hp, /*allow_tied=*/true, w));
  // Llama 3.x: RoPE frequency factors, one divisor per rotated pair (every layer shares them).
  LES_ASSIGN_OR_RETURN(w->rope_freqs, t.optional("rope_freqs.weight", {hp.n_rot / 2}, TypeClass::f32_only));
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
