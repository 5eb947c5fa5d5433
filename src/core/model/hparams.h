// Model hyperparameters read from a GGUF file's `{arch}.*` metadata keys.
//
// Source: the GGUF key naming of llama.cpp's `llm_kv` table (e.g.
// `qwen3moe.attention.head_count`), and section 2/6 of shared/fixtures/README.md.
// Every count is validated (positive, consistent: n_head % n_head_kv == 0,
// n_rot <= head_dim and even, n_expert_used <= n_expert ...); a missing or
// invalid key yields StatusCode::format with a message naming the key.
//
// Thread-safety: plain value.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace les {

namespace gguf {
class GgufFile;
}

// How router logits become expert probabilities (`{arch}.expert_gating_func`).
enum class ExpertGating : uint32_t { softmax = 1, sigmoid = 2 };

struct Hparams {
  std::string arch;          // general.architecture, e.g. "qwen3moe"
  int32_t n_vocab = 0;       // rows of token_embd.weight
  int32_t n_ctx_train = 0;   // {arch}.context_length (tokens)
  int32_t n_embd = 0;        // {arch}.embedding_length
  int32_t n_layer = 0;       // {arch}.block_count
  int32_t n_head = 0;        // {arch}.attention.head_count (query heads)
  int32_t n_head_kv = 0;     // {arch}.attention.head_count_kv (default n_head)
  int32_t head_dim = 0;      // {arch}.attention.key_length (default n_embd / n_head)
  int32_t head_dim_v = 0;    // {arch}.attention.value_length (default head_dim)
  int32_t n_rot = 0;         // {arch}.rope.dimension_count (default head_dim): rotated dims per head
  float rope_freq_base = 10000.0f;  // {arch}.rope.freq_base
  float rms_eps = 1e-5f;     // {arch}.attention.layer_norm_rms_epsilon
  int32_t n_ff = 0;          // {arch}.feed_forward_length (dense FFN width; 0 if absent)
  int32_t n_expert = 0;      // {arch}.expert_count (0 = dense model)
  int32_t n_expert_used = 0; // {arch}.expert_used_count (top-k)
  int32_t n_ff_exp = 0;      // {arch}.expert_feed_forward_length, else feed_forward_length
  int32_t n_ff_shexp = 0;    // {arch}.expert_shared_feed_forward_length (0 = no shared expert key)
  ExpertGating gating = ExpertGating::softmax;  // {arch}.expert_gating_func
  bool gating_from_file = false;    // true if expert_gating_func was present
  bool expert_weights_norm = false; // {arch}.expert_weights_norm (as stored; archs may override)
  bool weights_norm_from_file = false;
  float expert_weights_scale = 0.0f;  // {arch}.expert_weights_scale (0 = no scaling)

  bool is_moe() const noexcept { return n_expert > 0; }
  int32_t n_embd_q() const noexcept { return n_head * head_dim; }       // width of Q
  int32_t n_embd_k() const noexcept { return n_head_kv * head_dim; }    // width of K per token
  int32_t n_embd_v() const noexcept { return n_head_kv * head_dim_v; }  // width of V per token
};

// Reads and validates the hyperparameters of `file` (architecture from
// general.architecture; n_vocab from token_embd.weight's ne[1]). Errors: format
// (missing/invalid key or token_embd.weight, message names it).
Result<Hparams> load_hparams(const gguf::GgufFile& file);

}  // namespace les
