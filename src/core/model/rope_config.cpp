#include "core/model/rope_config.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/gguf/gguf_reader.h"

namespace les {
namespace {

Result<float> read_positive(const gguf::GgufFile& f, const std::string& key, double def, bool allow_zero) {
  LES_ASSIGN_OR_RETURN(double v, f.get_float_or(key, def));
  if (!std::isfinite(v) || v < 0 || (v == 0 && !allow_zero) || v > 3.0e38)
    return format_error(fmt::format("metadata key '{}' has invalid value {}", key, v));
  return static_cast<float>(v);
}

}  // namespace

const char* rope_scaling_type_name(RopeScalingType t) noexcept {
  switch (t) {
    case RopeScalingType::none: return "none";
    case RopeScalingType::linear: return "linear";
    case RopeScalingType::yarn: return "yarn";
  }
  return "?";
}

std::string RopeConfig::describe() const {
  if (!scaled()) return type == RopeScalingType::yarn ? "yarn x1 (no scaling)" : "none";
  std::string s = fmt::format("{} x{:g}", rope_scaling_type_name(type), 1.0 / static_cast<double>(freq_scale));
  if (type == RopeScalingType::yarn)
    s += fmt::format(" (original context {}, attn_factor {:g}, beta_fast {:g}, beta_slow {:g})", n_ctx_orig,
                     attn_factor, beta_fast, beta_slow);
  return s;
}

Result<RopeConfig> load_rope_config(const gguf::GgufFile& f, const std::string& a, int32_t n_ctx_train) {
  RopeConfig rc;
  LES_ASSIGN_OR_RETURN(rc.freq_base, read_positive(f, a + "rope.freq_base", 10000.0, false));
  LES_ASSIGN_OR_RETURN(rc.freq_base_swa, read_positive(f, a + "rope.freq_base_swa", 10000.0, false));
  const std::string tk = a + "rope.scaling.type";
  LES_ASSIGN_OR_RETURN(const std::string type, f.get_string_or(tk, "linear"));
  if (type == "none") {
    rc.type = RopeScalingType::none;
  } else if (type == "linear") {
    rc.type = RopeScalingType::linear;
  } else if (type == "yarn") {
    rc.type = RopeScalingType::yarn;
  } else if (type == "longrope") {
    return unsupported_error("metadata key '" + tk +
                             "' = \"longrope\": LongRoPE (per-layer rope_factors_long/short tensors) is not "
                             "supported");
  } else {
    return unsupported_error("metadata key '" + tk + "' = \"" + type +
                             "\" is not a RoPE scaling type (none, linear, yarn)");
  }
  // llama.cpp: rope.scaling.factor, else the older rope.scale_linear; 0 = none.
  const std::string fk = a + "rope.scaling.factor";
  const std::string lk = a + "rope.scale_linear";
  LES_ASSIGN_OR_RETURN(rc.factor, read_positive(f, f.find(fk) != nullptr ? fk : lk, 0.0, true));
  rc.freq_scale = rc.factor == 0.0f ? 1.0f : 1.0f / rc.factor;
  if (rc.type == RopeScalingType::none) rc.freq_scale = 1.0f;  // llama_context: never scale if type is none
  const std::string ok = a + "rope.scaling.original_context_length";
  uint64_t orig = static_cast<uint64_t>(n_ctx_train);
  if (f.find(ok) != nullptr) {
    LES_ASSIGN_OR_RETURN(orig, f.get_uint(ok));
  }
  if (orig == 0) orig = static_cast<uint64_t>(n_ctx_train);  // llama_context: 0 falls back to n_ctx_train
  if (orig > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    return format_error(fmt::format("metadata key '{}' has invalid value {}", ok, orig));
  rc.n_ctx_orig = static_cast<int32_t>(orig);
  LES_ASSIGN_OR_RETURN(rc.attn_factor_key, read_positive(f, a + "rope.scaling.attn_factor", 1.0, false));
  rc.ext_factor = rc.type == RopeScalingType::yarn ? 1.0f : 0.0f;
  rc.attn_factor = rc.ext_factor != 0.0f ? ops::yarn_attn_factor(rc.freq_scale, rc.attn_factor_key) : rc.attn_factor_key;
  return rc;
}

ops::RopeScaling rope_scaling_for_layer(const RopeConfig& rc, int32_t n_rot, bool swa, const float* freq_factors) {
  ops::RopeScaling s;
  s.freq_base = swa ? rc.freq_base_swa : rc.freq_base;
  s.freq_scale = swa ? rc.freq_scale_swa : rc.freq_scale;
  s.ext_factor = rc.ext_factor;
  s.attn_factor = rc.attn_factor;
  s.freq_factors = freq_factors;
  if (s.ext_factor != 0.0f)
    ops::yarn_corr_dims(n_rot, rc.n_ctx_orig, s.freq_base, rc.beta_fast, rc.beta_slow, s.corr_dims);
  return s;
}

}  // namespace les
