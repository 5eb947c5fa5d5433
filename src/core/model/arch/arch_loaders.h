// Per-architecture tensor sets and MoE semantics (one file per architecture:
// qwen3moe.cpp, llama.cpp, qwen2moe.cpp, qwen35moe.cpp, gemma3.cpp) and the shared pieces they are built
// from (layer_tensors.cpp).
//
// Each loader validates every tensor the architecture needs (name, shape, type)
// into `w` and fills `cfg`. Errors name the missing/wrong tensor or key.
// Thread-safety: pure functions of their inputs.
#pragma once

#include "core/model/model.h"
#include "core/model/tensor_lookup.h"

namespace les::models {

Status load_qwen3moe(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w);
Status load_llama(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w);
Status load_qwen2moe(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w);
Status load_qwen35moe(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w);
Status load_gemma3(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w);

// Dispatches on hp.arch. Errors: unsupported "architecture 'x' is not supported".
Status load_architecture(const TensorLookup& t, const Hparams& hp, ArchConfig* cfg, ModelWeights* w);

// Shared pieces.
// token_embd, output_norm, output (tied to token_embd when `allow_tied` and output.weight is absent).
Status load_embeddings(const TensorLookup& t, const Hparams& hp, bool allow_tied, ModelWeights* w);
// attn_norm, attn_{q,k,v,output}, optional biases / per-head Q/K norms per cfg
// (attn_q has 2 x n_embd_q rows when cfg.attn_output_gate).
Status load_attention(const TensorLookup& t, const Hparams& hp, const ArchConfig& cfg, int il, LayerWeights* l);
// ffn_norm plus ffn_{gate,up,down} {n_embd, n_ff}.
Status load_dense_ffn(const TensorLookup& t, const Hparams& hp, int il, LayerWeights* l);
// The FFN input norm (`norm_name`, ffn_norm.weight unless the architecture
// calls it otherwise), router (any matrix type), ffn_{gate,up,down}_exps.
// No architecture LES supports has a selection bias (exp_probs_b.bias): as
// in llama.cpp, such a tensor is left unused, so the file is refused.
Status load_moe_ffn(const TensorLookup& t, const Hparams& hp, int il, LayerWeights* l,
                    const char* norm_name = "ffn_norm.weight");
// ffn_{gate,up,down}_shexp {n_embd, n_ff_shexp} and, if `gated`, ffn_gate_inp_shexp {n_embd}.
Status load_shared_expert(const TensorLookup& t, const Hparams& hp, bool gated, int il, LayerWeights* l);
// Gating / renormalisation / scale from metadata over the arch defaults.
Status resolve_moe_config(const Hparams& hp, bool arch_default_renorm, ArchConfig* cfg);

}  // namespace les::models
