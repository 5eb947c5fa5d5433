// A model's RoPE frequency configuration from its `{arch}.rope.*` metadata,
// resolved as llama.cpp 81ff7abe does (llama_model_base::load_hparams, then
// llama_context's defaults for a context created with default parameters),
// and the per-layer ops::RopeScaling the forward pass hands to ops::rope.
//
// Keys (all optional): rope.freq_base (10000), rope.scaling.type ("none",
// "linear", "yarn"; absent = "linear", which with no factor is no scaling),
// rope.scaling.factor (else the older rope.scale_linear; 0 = none),
// rope.scaling.original_context_length (YaRN's n_ctx_orig; default
// context_length), rope.scaling.attn_factor (1), rope.freq_base_swa (10000;
// only architectures with sliding-window layers read it). Derived, as
// llama_context does: freq_scale = 1 / factor (1 for type none); YaRN sets
// ext_factor 1 and attn_factor = ops::yarn_attn_factor(freq_scale,
// rope.scaling.attn_factor); beta_fast 32 and beta_slow 1 (llama.cpp's
// defaults: it reads no yarn_beta_* key for LES's architectures, and
// metadata_policy.h refuses a file whose yarn_* keys ask otherwise).
// "longrope" (per-layer factor tensors) and unknown types are refused by name.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/rope.h"
#include "util/status.h"

namespace les {

namespace gguf {
class GgufFile;
}

enum class RopeScalingType : uint8_t { none, linear, yarn };

// "none", "linear", "yarn".
const char* rope_scaling_type_name(RopeScalingType t) noexcept;

struct RopeConfig {
  float freq_base = 10000.0f;               // rope.freq_base
  RopeScalingType type = RopeScalingType::linear;  // rope.scaling.type as llama.cpp reads it
  float factor = 0.0f;                      // rope.scaling.factor / rope.scale_linear as stored (0 = absent)
  float freq_scale = 1.0f;                  // what RoPE multiplies angles by: 1 / factor, or 1
  int32_t n_ctx_orig = 0;                   // YaRN's original context (tokens)
  float attn_factor_key = 1.0f;             // rope.scaling.attn_factor as stored
  float beta_fast = 32.0f, beta_slow = 1.0f;  // YaRN correction betas (llama.cpp's defaults)
  float ext_factor = 0.0f;                  // 1 for YaRN, else 0
  float attn_factor = 1.0f;                 // cos/sin magnitude handed to RoPE (see above)
  // Sliding-window layers: their own base (rope.freq_base_swa) and scale
  // (gemma3: 1, i.e. unscaled; an architecture may copy the global ones).
  float freq_base_swa = 10000.0f;
  float freq_scale_swa = 1.0f;

  // Whether any frequency scaling applies (freq_scale != 1 or YaRN).
  bool scaled() const noexcept { return freq_scale != 1.0f || ext_factor != 0.0f; }
  // "yarn x4 (orig ctx 32768)", "linear x8", "none".
  std::string describe() const;
};

// Reads and resolves the keys above for architecture prefix `a` ("qwen3moe.").
// n_ctx_train: context_length (YaRN's default original context). Errors:
// format (a key of the wrong type, a non-finite or non-positive value),
// unsupported (rope.scaling.type "longrope" or unknown, naming key and value).
Result<RopeConfig> load_rope_config(const gguf::GgufFile& f, const std::string& a, int32_t n_ctx_train);

// The RoPE parameters of a layer with n_rot rotated dims: the global ones, or
// the sliding-window layers' base and scale when `swa` (ext_factor,
// attn_factor and the betas are shared, as in llama.cpp; YaRN's correction
// dims follow the layer's base). freq_factors: Llama 3's rope_freqs.weight
// (n_rot/2 floats, borrowed), or null.
ops::RopeScaling rope_scaling_for_layer(const RopeConfig& rc, int32_t n_rot, bool swa,
                                        const float* freq_factors = nullptr);

}  // namespace les
