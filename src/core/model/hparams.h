// Model hyperparameters read from a GGUF file's `{arch}.*` metadata keys.
//
// Source: the GGUF key naming of llama.cpp's `llm_kv` table (e.g.
// `qwen3moe.attention.head_count`), and docs/model-graphs.md sections 1-3.
// Every count is validated (positive, consistent: n_head % n_head_kv == 0,
// n_rot <= head_dim and even, n_expert_used <= n_expert ...); a missing or
// invalid key yields StatusCode::format with a message naming the key.
// Models with MTP blocks (nextn_predict_layers) count them in block_count; the
// trunk is the first block_count - nextn_predict_layers blocks.
//
// Thread-safety: plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/rope_config.h"
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
  int32_t n_layer = 0;       // trunk layers: {arch}.block_count - n_layer_nextn
  int32_t n_layer_all = 0;   // {arch}.block_count: trunk plus MTP blocks (tensor index space blk.0 ..)
  int32_t n_layer_nextn = 0; // {arch}.nextn_predict_layers: MTP (NextN) blocks after the trunk (default 0)
  int32_t n_head = 0;        // {arch}.attention.head_count (query heads)
  int32_t n_head_kv = 0;     // {arch}.attention.head_count_kv (default n_head)
  int32_t head_dim = 0;      // {arch}.attention.key_length (default n_embd / n_head)
  int32_t head_dim_v = 0;    // {arch}.attention.value_length (default head_dim)
  int32_t n_rot = 0;         // {arch}.rope.dimension_count (default head_dim): rotated dims per head
  RopeConfig rope;           // {arch}.rope.freq_base and frequency scaling (rope_config.h)
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

  // Multi-section RoPE: {arch}.rope.dimension_sections (up to 4 entries, rest
  // 0); all zero when absent.
  int32_t rope_sections[4] = {0, 0, 0, 0};

  // Gated DeltaNet linear attention (hybrid models such as qwen35moe); all 0
  // when the file has no {arch}.ssm.* keys. Validated together: every one
  // positive, ssm_d_inner == ssm_dt_rank * ssm_d_state (k and v heads share
  // the head size), ssm_dt_rank a multiple of ssm_n_group.
  int32_t ssm_d_conv = 0;    // {arch}.ssm.conv_kernel: taps of the causal depthwise conv
  int32_t ssm_d_inner = 0;   // {arch}.ssm.inner_size: value width (v heads x head size)
  int32_t ssm_d_state = 0;   // {arch}.ssm.state_size: head size of k and v (the state is d_state^2 per v head)
  int32_t ssm_dt_rank = 0;   // {arch}.ssm.time_step_rank: number of v heads
  int32_t ssm_n_group = 0;   // {arch}.ssm.group_count: number of k (and q) heads
  // Per block (n_layer_all entries): 1 for a linear-attention (recurrent)
  // layer. From {arch}.attention.recurrent_layers when present, else layer il
  // is recurrent iff il < n_layer and (il + 1) % {arch}.full_attention_interval
  // != 0 (default interval 4). Empty for models without ssm keys.
  std::vector<uint8_t> recurrent_layers;

  // Sliding-window attention (gemma3): a query at position p of a layer that
  // swa_layers marks sees the keys at positions p - n_swa + 1 .. p
  // (llama.cpp's LLAMA_SWA_TYPE_STANDARD). n_swa 0 and swa_layers empty for
  // models without it. Those layers use RopeConfig's *_swa base and scale.
  int32_t n_swa = 0;
  std::vector<uint8_t> swa_layers;
  // Attention scores scale; 0 = 1/sqrt(head_dim). gemma3 sets its own
  // (query_pre_attn_scalar) and applies it to Q before the F16 cast (ArchConfig::q_prescale).
  float f_attention_scale = 0.0f;
  // Logits -> c * tanh(logits / c) when > 0 ({arch}.final_logit_softcapping; gemma3).
  float final_logit_softcapping = 0.0f;

  bool is_moe() const noexcept { return n_expert > 0; }
  bool is_hybrid() const noexcept { return ssm_d_state > 0; }
  bool is_recurrent(int32_t il) const noexcept {
    return il >= 0 && static_cast<size_t>(il) < recurrent_layers.size() && recurrent_layers[static_cast<size_t>(il)] != 0;
  }
  bool is_swa(int32_t il) const noexcept {
    return il >= 0 && static_cast<size_t>(il) < swa_layers.size() && swa_layers[static_cast<size_t>(il)] != 0;
  }
  int32_t ssm_n_embd_k() const noexcept { return ssm_n_group * ssm_d_state; }     // q or k width
  int32_t ssm_conv_channels() const noexcept { return 2 * ssm_n_embd_k() + ssm_d_inner; }  // q | k | v
  int32_t n_embd_q() const noexcept { return n_head * head_dim; }       // width of Q
  int32_t n_embd_k() const noexcept { return n_head_kv * head_dim; }    // width of K per token
  int32_t n_embd_v() const noexcept { return n_head_kv * head_dim_v; }  // width of V per token
};

// Reads and validates the hyperparameters of `file` (architecture from
// general.architecture; n_vocab from token_embd.weight's ne[1]). Errors: format
// (missing/invalid key or token_embd.weight, message names it).
Result<Hparams> load_hparams(const gguf::GgufFile& file);

}  // namespace les
