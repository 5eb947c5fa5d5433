#include "core/model/hparams.h"

#include <cmath>
#include <limits>
#include <optional>

#include "core/gguf/gguf_reader.h"

namespace les {
namespace {

// Reads `{arch}.{suffix}` as a positive int32 (or >= 0 when allow_zero). Missing: `def`
// if has_default, else a format error.
Result<int32_t> read_count(const gguf::GgufFile& f, const std::string& key, bool has_default, int64_t def,
                           bool allow_zero = false) {
  uint64_t v = 0;
  if (f.find(key) == nullptr) {
    if (!has_default) return format_error("missing metadata key '" + key + "'");
    return static_cast<int32_t>(def);
  }
  LES_ASSIGN_OR_RETURN(v, f.get_uint(key));
  if (v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) || (v == 0 && !allow_zero))
    return format_error("metadata key '" + key + "' has invalid value " + std::to_string(v));
  return static_cast<int32_t>(v);
}

Result<float> read_float(const gguf::GgufFile& f, const std::string& key, double def, bool positive) {
  LES_ASSIGN_OR_RETURN(double v, f.get_float_or(key, def));
  if (!std::isfinite(v) || (positive && !(v > 0)) || std::fabs(v) > 3.0e38)
    return format_error("metadata key '" + key + "' has invalid value " + std::to_string(v));
  return static_cast<float>(v);
}

// A count that llama.cpp reads with get_key_or_arr (one value, or one per
// layer): a scalar as read_count; an array of n_layer equal entries is that
// value; differing entries are refused (LES keeps one value per model).
Result<int32_t> read_layer_count(const gguf::GgufFile& f, const std::string& key, int32_t n_layer, bool has_default,
                                 int64_t def, bool allow_zero = false) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr || v->as_array() == nullptr) return read_count(f, key, has_default, def, allow_zero);
  const gguf::Array* arr = v->as_array();
  if (arr->count != static_cast<uint64_t>(n_layer))
    return format_error("metadata key '" + key + "' has " + std::to_string(arr->count) + " entries, block_count is " +
                        std::to_string(n_layer));
  std::optional<uint64_t> first = arr->uint_at(0);
  for (uint64_t i = 0; i < arr->count; ++i) {
    const std::optional<uint64_t> x = arr->uint_at(i);
    if (!x || *x > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) || (*x == 0 && !allow_zero))
      return format_error("metadata key '" + key + "'[" + std::to_string(i) + "] is not a valid count");
    if (*x != *first)
      return unsupported_error("metadata key '" + key + "' has per-layer values (" + std::to_string(*first) + " at layer 0, " +
                               std::to_string(*x) + " at layer " + std::to_string(i) +
                               "): LES supports one value for every layer");
  }
  return static_cast<int32_t>(*first);
}

// gemma3 (llama.cpp models/gemma3.cpp): sliding-window layers, their RoPE
// base, the final logit softcap and the attention scale.
Status load_gemma3(const gguf::GgufFile& f, const std::string& a, Hparams* hp) {
  LES_ASSIGN_OR_RETURN(hp->n_swa, read_count(f, a + "attention.sliding_window", true, 0, true));
  if (hp->n_swa > 0) {
    // The period: a scalar key (default 6); llama.cpp skips an array here
    // (get_key_or_arr into one value), so LES takes 6 too and refuses an
    // array that marks other layers (metadata_policy.cpp).
    const std::string pk = a + "attention.sliding_window_pattern";
    int32_t period = 6;
    if (const gguf::Value* v = f.find(pk); v != nullptr && v->as_array() == nullptr) {
      LES_ASSIGN_OR_RETURN(period, read_count(f, pk, true, 6, true));
    }
    hp->swa_layers.assign(static_cast<size_t>(hp->n_layer_all), 0);
    for (int32_t il = 0; il < hp->n_layer; ++il)
      hp->swa_layers[static_cast<size_t>(il)] = period == 0 || il % period < period - 1;
  }
  LES_ASSIGN_OR_RETURN(hp->final_logit_softcapping, read_float(f, a + "final_logit_softcapping", 0.0, false));
  if (hp->final_logit_softcapping < 0)
    return format_error("metadata key '" + a + "final_logit_softcapping' is negative");
  // gemma_pytorch's query_pre_attn_scalar: n_embd / n_head for the 27B model
  // (62 layers, as llama.cpp recognises it), head_dim otherwise.
  const int32_t d = hp->n_layer == 62 ? hp->n_embd / hp->n_head : hp->head_dim;
  hp->f_attention_scale = 1.0f / std::sqrt(static_cast<float>(d));
  return Status();
}

// Up to 4 non-negative entries, at least one positive.
Status load_rope_sections(const gguf::GgufFile& f, const std::string& key, Hparams* hp) {
  if (f.find(key) == nullptr) return Status();
  LES_ASSIGN_OR_RETURN(const gguf::Array* arr, f.get_array(key));
  if (arr->count == 0 || arr->count > 4)
    return format_error("metadata key '" + key + "' must have 1 to 4 entries, has " + std::to_string(arr->count));
  int64_t total = 0;
  for (uint64_t i = 0; i < arr->count; ++i) {
    const std::optional<int64_t> v = arr->int_at(i);
    if (!v || *v < 0 || *v > 65536)
      return format_error("metadata key '" + key + "'[" + std::to_string(i) + "] is not a section size in [0, 65536]");
    hp->rope_sections[i] = static_cast<int32_t>(*v);
    total += *v;
  }
  if (total == 0) return format_error("metadata key '" + key + "' has no positive section");
  return Status();
}

// The {arch}.ssm.* keys and the layer pattern of a hybrid model.
Status load_linear_attention(const gguf::GgufFile& f, const std::string& a, Hparams* hp) {
  LES_ASSIGN_OR_RETURN(hp->ssm_d_conv, read_count(f, a + "ssm.conv_kernel", false, 0));
  LES_ASSIGN_OR_RETURN(hp->ssm_d_inner, read_count(f, a + "ssm.inner_size", false, 0));
  LES_ASSIGN_OR_RETURN(hp->ssm_d_state, read_count(f, a + "ssm.state_size", false, 0));
  LES_ASSIGN_OR_RETURN(hp->ssm_dt_rank, read_count(f, a + "ssm.time_step_rank", false, 0));
  LES_ASSIGN_OR_RETURN(hp->ssm_n_group, read_count(f, a + "ssm.group_count", false, 0));
  // Sizes that keep every product below 2^31 (the real 35B-A3B: kernel 4, state
  // 128, 32 v heads, 16 groups).
  if (hp->ssm_d_conv > 64 || hp->ssm_d_state > 1024 || hp->ssm_dt_rank > 4096 || hp->ssm_n_group > 4096)
    return format_error("metadata keys '" + a + "ssm.*' out of range (conv_kernel " + std::to_string(hp->ssm_d_conv) +
                        " <= 64, state_size " + std::to_string(hp->ssm_d_state) + " <= 1024, time_step_rank " +
                        std::to_string(hp->ssm_dt_rank) + " and group_count " + std::to_string(hp->ssm_n_group) +
                        " <= 4096)");
  if (static_cast<int64_t>(hp->ssm_dt_rank) * hp->ssm_d_state != hp->ssm_d_inner)
    return format_error("metadata key '" + a + "ssm.inner_size' (" + std::to_string(hp->ssm_d_inner) +
                        ") is not time_step_rank x state_size (" + std::to_string(hp->ssm_dt_rank) + " x " +
                        std::to_string(hp->ssm_d_state) + ")");
  if (hp->ssm_dt_rank % hp->ssm_n_group != 0)
    return format_error("metadata key '" + a + "ssm.group_count' (" + std::to_string(hp->ssm_n_group) +
                        ") does not divide ssm.time_step_rank (" + std::to_string(hp->ssm_dt_rank) + ")");
  hp->recurrent_layers.assign(static_cast<size_t>(hp->n_layer_all), 0);
  const std::string rk = a + "attention.recurrent_layers";
  if (f.find(rk) != nullptr) {
    LES_ASSIGN_OR_RETURN(const gguf::Array* arr, f.get_array(rk));
    if (arr->count != static_cast<uint64_t>(hp->n_layer_all))
      return format_error("metadata key '" + rk + "' has " + std::to_string(arr->count) + " entries, block_count is " +
                          std::to_string(hp->n_layer_all));
    for (uint64_t i = 0; i < arr->count; ++i) {
      std::optional<bool> b = arr->bool_at(i);
      if (!b) {
        const std::optional<int64_t> v = arr->int_at(i);
        if (v && (*v == 0 || *v == 1)) b = *v == 1;
      }
      if (!b) return format_error("metadata key '" + rk + "'[" + std::to_string(i) + "] is not a bool");
      if (*b && static_cast<int32_t>(i) >= hp->n_layer)
        return format_error("metadata key '" + rk + "'[" + std::to_string(i) + "] marks an MTP block recurrent");
      hp->recurrent_layers[i] = *b ? 1 : 0;
    }
  } else {
    LES_ASSIGN_OR_RETURN(const int32_t interval, read_count(f, a + "full_attention_interval", true, 4));
    for (int32_t il = 0; il < hp->n_layer; ++il) hp->recurrent_layers[static_cast<size_t>(il)] = (il + 1) % interval != 0;
  }
  return Status();
}

}  // namespace

Result<Hparams> load_hparams(const gguf::GgufFile& f) {
  Hparams hp;
  hp.arch = f.architecture();
  if (hp.arch.empty()) return format_error("missing metadata key 'general.architecture'");
  const std::string a = hp.arch + ".";

  LES_ASSIGN_OR_RETURN(hp.n_layer_all, read_count(f, a + "block_count", false, 0));
  LES_ASSIGN_OR_RETURN(hp.n_layer_nextn, read_count(f, a + "nextn_predict_layers", true, 0, true));
  if (hp.n_layer_nextn >= hp.n_layer_all)
    return format_error("metadata key '" + a + "nextn_predict_layers' (" + std::to_string(hp.n_layer_nextn) +
                        ") leaves no trunk layer of block_count " + std::to_string(hp.n_layer_all));
  hp.n_layer = hp.n_layer_all - hp.n_layer_nextn;
  LES_ASSIGN_OR_RETURN(hp.n_embd, read_count(f, a + "embedding_length", false, 0));
  LES_ASSIGN_OR_RETURN(hp.n_head, read_layer_count(f, a + "attention.head_count", hp.n_layer, false, 0));
  LES_ASSIGN_OR_RETURN(hp.n_head_kv, read_layer_count(f, a + "attention.head_count_kv", hp.n_layer, true, hp.n_head));
  if (hp.n_head % hp.n_head_kv != 0)
    return format_error("metadata key '" + a + "attention.head_count_kv' (" + std::to_string(hp.n_head_kv) +
                        ") does not divide attention.head_count (" + std::to_string(hp.n_head) + ")");
  const bool has_kl = f.find(a + "attention.key_length") != nullptr;
  if (!has_kl && hp.n_embd % hp.n_head != 0)
    return format_error("metadata key '" + a + "attention.key_length' missing and embedding_length is not a "
                        "multiple of head_count");
  LES_ASSIGN_OR_RETURN(hp.head_dim, read_count(f, a + "attention.key_length", true, hp.n_embd / hp.n_head));
  LES_ASSIGN_OR_RETURN(hp.head_dim_v, read_count(f, a + "attention.value_length", true, hp.head_dim));
  LES_ASSIGN_OR_RETURN(hp.n_rot, read_count(f, a + "rope.dimension_count", true, hp.head_dim));
  if (hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
    return format_error("metadata key '" + a + "rope.dimension_count' (" + std::to_string(hp.n_rot) +
                        ") must be even and <= head_dim (" + std::to_string(hp.head_dim) + ")");
  LES_ASSIGN_OR_RETURN(hp.rms_eps, read_float(f, a + "attention.layer_norm_rms_epsilon", 1e-5, true));
  LES_ASSIGN_OR_RETURN(hp.n_ctx_train, read_count(f, a + "context_length", true, 4096));
  LES_ASSIGN_OR_RETURN(hp.rope, load_rope_config(f, a, hp.n_ctx_train));
  LES_ASSIGN_OR_RETURN(hp.n_ff, read_layer_count(f, a + "feed_forward_length", hp.n_layer, true, 0, true));

  LES_ASSIGN_OR_RETURN(hp.n_expert, read_count(f, a + "expert_count", true, 0, true));
  if (hp.n_expert > 0) {
    LES_ASSIGN_OR_RETURN(hp.n_expert_used, read_count(f, a + "expert_used_count", false, 0));
    if (hp.n_expert_used > hp.n_expert)
      return format_error("metadata key '" + a + "expert_used_count' (" + std::to_string(hp.n_expert_used) +
                          ") exceeds expert_count (" + std::to_string(hp.n_expert) + ")");
    const bool has_exp_ff = f.find(a + "expert_feed_forward_length") != nullptr;
    if (!has_exp_ff && hp.n_ff == 0)
      return format_error("missing metadata key '" + a + "expert_feed_forward_length'");
    LES_ASSIGN_OR_RETURN(hp.n_ff_exp, read_count(f, a + "expert_feed_forward_length", true, hp.n_ff));
    LES_ASSIGN_OR_RETURN(hp.n_ff_shexp, read_count(f, a + "expert_shared_feed_forward_length", true, 0, true));
    const std::string gk = a + "expert_gating_func";
    if (f.find(gk) != nullptr) {
      LES_ASSIGN_OR_RETURN(uint64_t g, f.get_uint(gk));
      if (g != 1 && g != 2)
        return format_error("metadata key '" + gk + "' has unsupported value " + std::to_string(g) +
                            " (1 = softmax, 2 = sigmoid)");
      hp.gating = static_cast<ExpertGating>(g);
      hp.gating_from_file = true;
    }
    const std::string nk = a + "expert_weights_norm";
    if (f.find(nk) != nullptr) {
      LES_ASSIGN_OR_RETURN(hp.expert_weights_norm, f.get_bool(nk));
      hp.weights_norm_from_file = true;
    }
    LES_ASSIGN_OR_RETURN(hp.expert_weights_scale, read_float(f, a + "expert_weights_scale", 0.0, false));
  } else {
    if (hp.n_ff == 0) return format_error("missing metadata key '" + a + "feed_forward_length'");
  }

  LES_RETURN_IF_ERROR(load_rope_sections(f, a + "rope.dimension_sections", &hp));
  if (f.find(a + "ssm.state_size") != nullptr) LES_RETURN_IF_ERROR(load_linear_attention(f, a, &hp));
  if (hp.arch == "gemma3") LES_RETURN_IF_ERROR(load_gemma3(f, a, &hp));

  const gguf::TensorInfo* emb = f.find_tensor("token_embd.weight");
  if (emb == nullptr) return format_error("missing tensor 'token_embd.weight'");
  if (emb->ne[1] <= 0 || emb->ne[1] > std::numeric_limits<int32_t>::max())
    return format_error("tensor 'token_embd.weight' has invalid vocab dimension");
  hp.n_vocab = static_cast<int32_t>(emb->ne[1]);
  return hp;
}

}  // namespace les
