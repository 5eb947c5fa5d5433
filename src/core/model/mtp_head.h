// The MTP (multi-token prediction, "NextN") block of a qwen35moe model, run as
// its own small decoder (docs/model-graphs.md section 4, "MTP"; llama.cpp's qwen35moe
// graph_mtp): at position p it takes the token at p and the target model's
// final hidden row of position p - 1 (after output_norm; zeros before the
// first position) and gives logits for the token at p + 1:
//
//   x  = eh_proj · [rms(embed(token))·enorm ; rms(h_prev)·hnorm]   (embedding half first)
//   x += attention(rms(x)·attn_norm)        the block's gated full attention, IMRoPE at p,
//                                           K/V in this head's own one-layer KV cache
//   x += moe(rms(x)·post_attention_norm)    routed experts (any ExpertSource: they stream
//                                           like a trunk layer's, layer index n_layer) + shared expert
//   h_mtp  = rms(x)·shared_head_norm        (output_norm when absent)
//   logits = shared_head_head · h_mtp       (output.weight when absent)
//
// h_mtp also stands in for the target's hidden row when drafts are chained
// (the draft after a draft has no target row yet).
//
// Thread-safety: thread-compatible (one thread at a time). The model must
// outlive the head.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/model/attention_layer.h"
#include "core/model/expert_source.h"
#include "core/model/kv_cache.h"
#include "core/model/model.h"
#include "core/model/moe_layer.h"
#include "core/model/weight_matmul.h"
#include "kernels/thread_pool.h"
#include "util/status.h"

namespace les {

struct MtpHeadParams {
  int32_t n_ctx = 0;        // positions of the head's KV cache; 0 = min(context_length, 4096)
  int n_threads = 0;        // 0 = ModelParams.n_threads, then hardware
  GgmlType kv_type = GgmlType::F16;
};

class MtpHead {
 public:
  // Errors: unsupported (the model has no MTP block), invalid_argument
  // (n_ctx < 0), as KvCache::create.
  static Result<std::unique_ptr<MtpHead>> create(const Model& model, const MtpHeadParams& p);

  // Runs n = tokens.size() positions n_past() .. n_past() + n - 1: token i with
  // the hidden row h_prev[i] (n x n_embd floats: the target's final hidden
  // state of the position before token i's). Afterwards logits() holds the
  // last position's logits and hidden() its h_mtp; with all_logits,
  // logits_all() holds n x n_vocab. Errors: invalid_argument (empty, token id
  // out of range, h_prev too short), context_full, errors of the expert source;
  // on error n_past() is unchanged.
  Status decode(std::span<const int32_t> tokens, std::span<const float> h_prev, ExpertSource& experts,
                bool all_logits = false);

  std::span<const float> logits() const noexcept { return logits_; }
  std::span<const float> logits_all() const noexcept { return logits_all_; }
  std::span<const float> hidden() const noexcept { return hidden_; }  // h_mtp of the last position
  int32_t n_past() const noexcept { return n_past_; }
  int32_t n_ctx() const noexcept { return kv_.n_ctx(); }
  // Keeps the first n_keep positions. Errors: invalid_argument (n_keep outside [0, n_past]).
  Status trim(int32_t n_keep);
  void reset() noexcept { n_past_ = 0; }
  const Model& model() const noexcept { return model_; }
  int32_t layer() const noexcept { return layer_; }  // the block's index (n_layer)

 private:
  MtpHead(const Model& model, KvCache kv, int n_threads);

  const Model& model_;
  int32_t layer_;
  KvCache kv_;
  int32_t n_past_ = 0;
  std::unique_ptr<kernels::ThreadPool> pool_;
  std::vector<float> e_, cat_, x_, h_, o_, logits_, logits_all_, hidden_;
  AttentionLayerScratch attn_;
  FfnScratch ffn_;
  MatmulScratch mm_;
};

}  // namespace les
