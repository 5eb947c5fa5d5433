#include "core/model/metadata_policy.h"

#include <cmath>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "core/gguf/gguf_reader.h"

namespace les {
namespace {

constexpr const char* kRef = "llama.cpp 81ff7abe";

// A key's value for a message: numbers as written, strings quoted, arrays by
// their first entries.
std::string shown(const gguf::Value& v) {
  if (const gguf::Array* a = v.as_array()) {
    std::string s = "[";
    for (uint64_t i = 0; i < a->count && i < 4; ++i) {
      const auto e = a->value_at(i);
      s += (i ? ", " : "") + (e ? shown(*e) : std::string("?"));
    }
    return s + (a->count > 4 ? fmt::format(", ... ({} entries)]", a->count) : "]");
  }
  if (const std::string* str = v.as_string()) return "\"" + *str + "\"";
  if (auto b = v.as_bool()) return *b ? "true" : "false";
  if (auto u = v.as_uint()) return std::to_string(*u);
  if (auto i = v.as_int()) return std::to_string(*i);
  if (auto f = v.as_float()) return fmt::format("{:g}", *f);
  return "?";
}

// A number (bool as 0/1) or nullopt for strings and arrays.
std::optional<double> number(const gguf::Value& v) {
  if (auto b = v.as_bool()) return *b ? 1.0 : 0.0;
  return v.as_float();
}

// Every entry of an array is 0 / false (a per-layer key that changes nothing).
bool all_zero(const gguf::Value& v) {
  const gguf::Array* a = v.as_array();
  if (a == nullptr) return number(v) == 0.0;
  for (uint64_t i = 0; i < a->count; ++i) {
    const auto e = a->value_at(i);
    if (!e || number(*e) != 0.0) return false;
  }
  return true;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

class Checker {
 public:
  Checker(const gguf::GgufFile& f, const Hparams& hp) : f_(f), hp_(hp), a_(hp.arch + ".") {}

  // Refuses `{arch}.suffix` when present and `ok` rejects its value.
  void check(const char* suffix, const std::function<bool(const gguf::Value&)>& ok, const std::string& why) {
    const std::string key = a_ + suffix;
    const gguf::Value* v = f_.find(key);
    if (v == nullptr || ok(*v)) return;
    out_.push_back(fmt::format("metadata key '{}' = {}: {}", key, shown(*v), why));
  }
  // Keys llama.cpp does not read for this architecture: what it assumes instead.
  void not_read(const char* suffix, const std::function<bool(const gguf::Value&)>& ok, const std::string& assumes) {
    check(suffix, ok, fmt::format("{} does not read this key for {} ({}); LES refuses a value it cannot match to the "
                                  "reference",
                                  kRef, hp_.arch, assumes));
  }
  std::vector<std::string> take() { return std::move(out_); }

 private:
  const gguf::GgufFile& f_;
  const Hparams& hp_;
  std::string a_;
  std::vector<std::string> out_;
};

auto equals(double want) {
  return [want](const gguf::Value& v) {
    const auto x = number(v);
    return x && near(*x, want);
  };
}
auto in_range(double lo, double hi) {
  return [lo, hi](const gguf::Value& v) {
    const auto x = number(v);
    return x && *x >= lo && *x <= hi;
  };
}
auto zero_or_one() {
  return [](const gguf::Value& v) {
    const auto x = number(v);
    return x && (*x == 0.0 || *x == 1.0);
  };
}

}  // namespace

std::vector<std::string> metadata_problems(const gguf::GgufFile& f, const Hparams& hp) {
  Checker c(f, hp);
  const std::string& arch = hp.arch;
  const bool gemma3 = arch == "gemma3";
  const bool qwen35moe = arch == "qwen35moe";
  const bool has_swa = hp.n_swa > 0;

  // Read and computed by llama.cpp, not computed by LES.
  c.check("attention.causal", equals(1.0), "non-causal attention is not supported");
  c.check("expert_group_count", in_range(0, 1),
          fmt::format("group-limited expert routing ({} applies it to any MoE architecture) is not supported", kRef));
  if (has_swa) {
    c.check("attention.key_length_swa", equals(hp.head_dim),
            "sliding-window layers with their own key length are not supported");
    c.check("attention.value_length_swa", equals(hp.head_dim_v),
            "sliding-window layers with their own value length are not supported");
    c.check("rope.dimension_count_swa", equals(hp.n_rot),
            "sliding-window layers with their own rotary dimension count are not supported");
  }
  if (!qwen35moe && hp.n_layer_nextn > 0)
    c.not_read("nextn_predict_layers", equals(0), "every block is a trunk layer");
  if (!qwen35moe && hp.is_hybrid())
    c.not_read("ssm.state_size", [](const gguf::Value&) { return false; }, "no linear-attention layers");

  // MoE semantics llama.cpp hard-codes for these architectures
  // (build_moe_ffn's arguments in models/<arch>.cpp).
  if (hp.is_moe()) {
    const bool renorm = arch != "qwen2moe";
    c.not_read("expert_gating_func", equals(1), "the router is a softmax (1)");
    c.not_read("expert_weights_norm", equals(renorm ? 1 : 0),
               renorm ? "the top-k weights are renormalised (true)" : "the top-k weights are not renormalised (false)");
    c.not_read("expert_weights_scale", zero_or_one(), "the weights are not scaled (0 or 1)");
    c.not_read("expert_shared_count", in_range(0, (arch == "qwen2moe" || qwen35moe) ? 1 : 0),
               "the architecture's fixed shared experts");
    c.not_read("leading_dense_block_count", equals(0), "every layer is MoE");
    c.not_read("moe_every_n_layers", in_range(0, 1), "every layer is MoE");
    c.not_read("interleave_moe_layer_step", in_range(0, 1), "every layer is MoE");
    if (arch == "llama")
      c.not_read("expert_feed_forward_length", equals(hp.n_ff),
                 "experts are feed_forward_length wide: " + std::to_string(hp.n_ff));
  }
  c.not_read("router_logit_softcapping", equals(0), "no router softcapping");
  c.not_read("swiglu_clamp_exp", all_zero, "no SwiGLU clamp");
  c.not_read("swiglu_clamp_shexp", all_zero, "no SwiGLU clamp");

  // Attention and logits.
  const double scale = hp.f_attention_scale != 0.0f ? hp.f_attention_scale : 1.0 / std::sqrt(double(hp.head_dim));
  c.not_read("attention.scale", equals(scale), fmt::format("the scores are scaled by {:g}", scale));
  c.not_read("attention.output_scale", zero_or_one(), "no output scale");
  c.not_read("attention.value_scale", zero_or_one(), "no value scale");
  c.not_read("attention.temperature_length", equals(0), "no attention temperature tuning");
  c.not_read("attention.temperature_scale", equals(0), "no attention temperature tuning");
  c.not_read("attention.clamp_kqv", equals(0), "no Q/K/V clamp");
  c.not_read("attention.max_alibi_bias", equals(0), "no ALiBi");
  c.not_read("attn_logit_softcapping", equals(0), "no attention softcapping");
  if (!gemma3) {
    c.not_read("final_logit_softcapping", equals(0), "no final softcapping");
    c.not_read("attention.sliding_window", equals(0), "every layer attends to the whole context");
  }
  c.not_read("logit_scale", zero_or_one(), "the logits are not scaled");
  c.not_read("residual_scale", zero_or_one(), "the residual is not scaled");
  c.not_read("embedding_scale", zero_or_one(), "the embeddings are not scaled");
  c.not_read("use_parallel_residual", equals(0), "sequential residual blocks");
  c.not_read("swin_norm", equals(0), "no Swin norm");
  if (gemma3 && has_swa) {
    // llama.cpp reads the period from a scalar only; an array must mark the layers the period does.
    c.check(
        "attention.sliding_window_pattern",
        [&](const gguf::Value& v) {
          const gguf::Array* a = v.as_array();
          if (a == nullptr) return true;
          if (a->count != static_cast<uint64_t>(hp.n_layer)) return false;
          for (uint64_t i = 0; i < a->count; ++i) {
            const auto e = a->value_at(i);
            if (!e || number(*e) != (hp.is_swa(static_cast<int32_t>(i)) ? 1.0 : 0.0)) return false;
          }
          return true;
        },
        fmt::format("{} reads the sliding-window period of gemma3 from a scalar only and takes 6 when it is an "
                    "array; this array marks other layers",
                    kRef));
  }

  // RoPE keys llama.cpp does not read for these architectures.
  c.not_read("rope.scaling.alpha", equals(0), "no NTK-alpha scaling (only hunyuan reads it)");
  c.not_read("rope.scaling.yarn_log_multiplier", equals(0), "no YaRN log multiplier (deepseek2 / mistral3 read it)");
  if (hp.rope.type == RopeScalingType::yarn && hp.rope.scaled()) {
    const double factor = 1.0 / hp.rope.freq_scale;
    c.not_read("rope.scaling.yarn_beta_fast", equals(hp.rope.beta_fast), "beta_fast 32");
    c.not_read("rope.scaling.yarn_beta_slow", equals(hp.rope.beta_slow), "beta_slow 1");
    c.not_read("rope.scaling.yarn_ext_factor", equals(1), "extrapolation factor 1");
    const double mscale = 0.1 * std::log(factor) + 1.0;
    c.not_read(
        "rope.scaling.yarn_attn_factor",
        [mscale](const gguf::Value& v) {
          const auto x = number(v);
          return x && std::fabs(*x - mscale) <= 1e-4;
        },
        fmt::format("the YaRN magnitude 0.1 ln(factor) + 1 = {:.6g}", mscale));
  }
  return c.take();
}

}  // namespace les
