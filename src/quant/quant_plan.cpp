// Per-tensor quantisation types; see quant_plan.h for the rules.
#include "quant/quant_plan.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace les::quant {
namespace {

enum class Category { token_embd, output, attn_q, attn_k, attn_v, attn_output, ffn_up, ffn_gate, ffn_down, other };

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

Category category_of(const std::string& n) {
  if (n == "output.weight") return Category::output;
  if (n == "token_embd.weight" || n == "per_layer_token_embd.weight") return Category::token_embd;
  // attn_qkv and attn_kv_b behave as attn_v (the value projection is in them).
  if (contains(n, "attn_qkv.weight") || contains(n, "attn_kv_b.weight") || contains(n, "attn_v.weight"))
    return Category::attn_v;
  if (contains(n, "attn_k.weight")) return Category::attn_k;
  if (contains(n, "attn_q.weight")) return Category::attn_q;
  if (contains(n, "attn_output.weight")) return Category::attn_output;
  if (contains(n, "ffn_up")) return Category::ffn_up;
  if (contains(n, "ffn_gate")) return Category::ffn_gate;
  if (contains(n, "ffn_down")) return Category::ffn_down;
  return Category::other;
}

bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

bool is_routed_expert(const std::string& n) {
  return contains(n, "ffn_gate_exps") || contains(n, "ffn_up_exps") || contains(n, "ffn_down_exps");
}

int layer_of(const std::string& n) {
  int l = -1;
  if (std::sscanf(n.c_str(), "blk.%d.", &l) != 1) return -1;
  return l;
}

bool requires_imatrix(GgmlType t) {
  switch (t) {
    case GgmlType::IQ3_XXS: case GgmlType::IQ2_XXS: case GgmlType::IQ2_XS: case GgmlType::IQ2_S:
    case GgmlType::IQ1_M: case GgmlType::IQ1_S: return true;
    default: return false;
  }
}

GgmlType base_type(Preset p) {
  switch (p) {
    case Preset::q8_0: return GgmlType::Q8_0;
    case Preset::q4_k_m: return GgmlType::Q4_K;
    case Preset::q3_k_m: return GgmlType::Q3_K;
    case Preset::les_mixed: case Preset::les_mixed_down4: return GgmlType::Q4_K;
    case Preset::iq4_xs: return GgmlType::IQ4_XS;
    case Preset::mxfp4_moe: return GgmlType::MXFP4;
    case Preset::iq3_xxs: return GgmlType::IQ3_XXS;
    case Preset::iq2_xxs: return GgmlType::IQ2_XXS;
    case Preset::les_mixed_iq3: case Preset::les_mixed_iq2: return GgmlType::Q4_K;
  }
  return GgmlType::Q8_0;
}

struct Counters {
  int n_attn_v = 0, i_attn_v = 0, i_ffn_down = 0;
};

// Facts of the model (and the run) that some presets' rules read.
struct ModelFacts {
  int n_layer = 0, n_expert = 0, n_gqa = 1;
  bool has_imatrix = false;
};

// llama-quantize's IQ3_XXS and IQ2_XXS choices (quant_plan.h) for a tensor
// that is not output or token_embd.
GgmlType iq_preset_choice(Category c, Preset p, const ModelFacts& m, Counters& k) {
  if (p == Preset::iq2_xxs) {
    switch (c) {
      case Category::attn_v: return m.n_gqa >= 4 || m.n_expert >= 4 ? GgmlType::Q4_K : GgmlType::Q2_K;
      case Category::attn_k: return m.n_expert == 8 ? GgmlType::Q4_K : GgmlType::IQ2_XXS;
      case Category::ffn_down: return k.i_ffn_down++ < m.n_layer / 8 ? GgmlType::Q2_K : GgmlType::IQ2_XXS;
      case Category::attn_output: return m.n_expert == 8 ? GgmlType::Q5_K : GgmlType::IQ2_XXS;
      default: return GgmlType::IQ2_XXS;
    }
  }
  switch (c) {  // IQ3_XXS
    case Category::attn_v: return m.n_expert == 8 ? GgmlType::Q8_0 : m.n_gqa >= 4 ? GgmlType::Q4_K : GgmlType::IQ3_XXS;
    case Category::attn_k: return m.n_expert == 8 ? GgmlType::Q8_0 : GgmlType::IQ2_S;
    case Category::attn_q: return GgmlType::IQ2_S;
    case Category::attn_output: return m.n_expert == 8 ? GgmlType::Q5_K : GgmlType::IQ3_S;
    default: return GgmlType::IQ3_XXS;
  }
}

// The preset's choice for a tensor that no override matched.
GgmlType preset_choice(const TensorShape& t, Category c, const PlanOptions& o, const ModelFacts& m, Counters& k) {
  const Preset p = o.preset;
  const int n_layer = m.n_layer, n_expert = m.n_expert;
  GgmlType type = base_type(p);
  if (p == Preset::mxfp4_moe) return t.ne[2] > 1 ? GgmlType::MXFP4 : GgmlType::Q8_0;
  if (p == Preset::les_mixed_iq3) return is_routed_expert(t.name) ? GgmlType::IQ3_XXS : GgmlType::Q4_K;
  if (p == Preset::les_mixed_iq2) {
    if (!is_routed_expert(t.name)) return GgmlType::Q4_K;
    const auto& xs = o.iq2_xs_experts;
    return std::find(xs.begin(), xs.end(), t.name) != xs.end() ? GgmlType::IQ2_XS : GgmlType::IQ2_XXS;
  }
  if (p == Preset::iq3_xxs || p == Preset::iq2_xxs) {
    if (c == Category::output) return t.ne[0] % kQK_K != 0 ? GgmlType::Q8_0 : GgmlType::Q5_K;
    if (c == Category::token_embd) return p == Preset::iq3_xxs ? GgmlType::IQ3_S : GgmlType::Q2_K;
    return iq_preset_choice(c, p, m, k);
  }
  if (p == Preset::les_mixed || p == Preset::les_mixed_down4) {
    if (is_routed_expert(t.name))
      return p == Preset::les_mixed_down4 && contains(t.name, "ffn_down_exps") ? GgmlType::Q4_K : GgmlType::Q3_K;
    return GgmlType::Q4_K;
  }
  const int64_t block = ggml_type_traits(type).block_size;
  switch (c) {
    case Category::output:
      if (t.ne[0] % block != 0) return GgmlType::Q8_0;
      return type == GgmlType::Q8_0 ? type : GgmlType::Q6_K;
    case Category::token_embd: return type;
    case Category::attn_v:
      if (p == Preset::q3_k_m) type = k.i_attn_v < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
      else if (p == Preset::q4_k_m && more_bits(k.i_attn_v, k.n_attn_v)) type = GgmlType::Q6_K;
      else if (p == Preset::iq4_xs && m.n_gqa >= 4) type = GgmlType::Q5_K;
      if (n_expert == 8) type = GgmlType::Q8_0;
      ++k.i_attn_v;
      return type;
    case Category::attn_k: return n_expert == 8 ? GgmlType::Q8_0 : type;
    case Category::ffn_down: {
      int i = k.i_ffn_down;
      if (n_expert > 1) i = layer_of(t.name);
      if (p == Preset::q3_k_m) type = i < n_layer / 16 ? GgmlType::Q5_K : GgmlType::Q4_K;
      else if (p == Preset::q4_k_m && i >= 0 && more_bits(i, n_layer)) type = GgmlType::Q6_K;
      else if (p == Preset::iq4_xs && i < n_layer / 8 && !m.has_imatrix) type = GgmlType::Q5_K;
      ++k.i_ffn_down;
      return type;
    }
    case Category::attn_output:
      if (n_expert == 8 && (p == Preset::q3_k_m || p == Preset::q4_k_m || p == Preset::iq4_xs)) return GgmlType::Q5_K;
      if (n_expert != 8 && p == Preset::q3_k_m) return GgmlType::Q4_K;
      return type;
    default: return type;
  }
}

}  // namespace

std::optional<Preset> preset_from_name(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (n == "q8_0") return Preset::q8_0;
  if (n == "q4_k_m") return Preset::q4_k_m;
  if (n == "q3_k_m") return Preset::q3_k_m;
  if (n == "les-mixed") return Preset::les_mixed;
  if (n == "les-mixed-down4") return Preset::les_mixed_down4;
  if (n == "iq4_xs") return Preset::iq4_xs;
  if (n == "mxfp4_moe") return Preset::mxfp4_moe;
  if (n == "iq3_xxs") return Preset::iq3_xxs;
  if (n == "iq2_xxs") return Preset::iq2_xxs;
  if (n == "les-mixed-iq3") return Preset::les_mixed_iq3;
  if (n == "les-mixed-iq2") return Preset::les_mixed_iq2;
  return std::nullopt;
}

const char* preset_names() {
  return "q8_0, q4_k_m, q3_k_m, les-mixed, les-mixed-down4, iq4_xs, mxfp4_moe, iq3_xxs, iq2_xxs, les-mixed-iq3, "
         "les-mixed-iq2";
}

const char* preset_name(Preset p) {
  switch (p) {
    case Preset::q8_0: return "q8_0";
    case Preset::q4_k_m: return "q4_k_m";
    case Preset::q3_k_m: return "q3_k_m";
    case Preset::les_mixed: return "les-mixed";
    case Preset::les_mixed_down4: return "les-mixed-down4";
    case Preset::iq4_xs: return "iq4_xs";
    case Preset::mxfp4_moe: return "mxfp4_moe";
    case Preset::iq3_xxs: return "iq3_xxs";
    case Preset::iq2_xxs: return "iq2_xxs";
    case Preset::les_mixed_iq3: return "les-mixed-iq3";
    case Preset::les_mixed_iq2: return "les-mixed-iq2";
  }
  return "?";
}

uint32_t preset_file_type(Preset p) {
  switch (p) {
    case Preset::q8_0: return 7;
    case Preset::q4_k_m: return 15;
    case Preset::q3_k_m: return 12;
    case Preset::les_mixed: case Preset::les_mixed_down4: return 14;
    case Preset::iq4_xs: return 30;
    case Preset::mxfp4_moe: return 38;
    case Preset::iq3_xxs: return 23;
    case Preset::iq2_xxs: return 19;
    case Preset::les_mixed_iq3: case Preset::les_mixed_iq2: return 14;
  }
  return 0;
}

Result<GgmlType> parse_type_name(const std::string& name) {
  const auto t = ggml_type_from_name(name.c_str());
  if (!t) return invalid_argument_error("unknown tensor type '" + name + "' (ggml's names: q4_k, q8_0, f16, ...)");
  return *t;
}

Result<TypeOverride> parse_type_override(const std::string& spec) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    return invalid_argument_error("--tensor-type '" + spec + "': expected REGEX=TYPE");
  auto type = parse_type_name(spec.substr(eq + 1));
  if (!type.ok()) return invalid_argument_error("--tensor-type '" + spec + "': " + type.status().message());
  TypeOverride o;
  o.pattern = spec.substr(0, eq);
  o.type = *type;
  try {
    o.re = std::regex(o.pattern);
  } catch (const std::regex_error& e) {
    return invalid_argument_error("--tensor-type '" + spec + "': bad regular expression: " + e.what());
  }
  return o;
}

bool tensor_allows_quantization(const std::string& n, int n_dims) {
  if (n_dims < 2) return false;
  if (n.size() < 6 || n.compare(n.size() - 6, 6, "weight") != 0) return false;
  static const char* const kKeep[] = {"_norm.weight", "ffn_gate_inp.weight", "altup", "laurel", "per_layer_model_proj",
                                      "ssm_conv1d", "shortconv.conv.weight", "attn_rel_b.weight", "position_embd",
                                      "token_types.weight", "time_mix_"};
  for (const char* k : kKeep)
    if (contains(n, k)) return false;
  return true;
}

GgmlType fallback_type(GgmlType wanted, int64_t ne0) {
  const int64_t block = ggml_type_traits(wanted).block_size;
  if (block <= 0 || ne0 % block == 0) return wanted;
  GgmlType f = GgmlType::F16;
  switch (wanted) {
    case GgmlType::IQ1_S: case GgmlType::IQ1_M: case GgmlType::IQ2_XXS: case GgmlType::IQ2_XS: case GgmlType::IQ2_S:
    case GgmlType::IQ3_XXS: case GgmlType::IQ3_S: case GgmlType::IQ4_XS: f = GgmlType::IQ4_NL; break;
    case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::TQ1_0: case GgmlType::TQ2_0: f = GgmlType::Q4_0; break;
    case GgmlType::Q4_K: f = GgmlType::Q5_0; break;
    case GgmlType::Q5_K: f = GgmlType::Q5_1; break;
    case GgmlType::Q6_K: f = GgmlType::Q8_0; break;
    default: f = GgmlType::F16; break;
  }
  return ne0 % ggml_type_traits(f).block_size == 0 ? f : GgmlType::F16;
}

std::vector<TensorChoice> plan_types(const std::vector<TensorShape>& tensors, const PlanOptions& o, int n_layer,
                                     int n_expert, int n_gqa, bool has_imatrix) {
  const ModelFacts facts{n_layer, n_expert, n_gqa, has_imatrix};
  Counters k;
  for (const TensorShape& t : tensors)
    if (tensor_allows_quantization(t.name, t.n_dims) && category_of(t.name) == Category::attn_v) ++k.n_attn_v;
  std::vector<TensorChoice> out;
  out.reserve(tensors.size());
  for (const TensorShape& t : tensors) {
    TensorChoice ch;
    ch.type = ch.wanted = t.type;
    if (!tensor_allows_quantization(t.name, t.n_dims)) {
      out.push_back(ch);
      continue;
    }
    const Category c = category_of(t.name);
    GgmlType want;
    if (c == Category::token_embd && o.token_embd_type) want = *o.token_embd_type;
    else if (c == Category::output && o.output_type) want = *o.output_type;
    else {
      const TypeOverride* hit = nullptr;
      for (const TypeOverride& ov : o.overrides)
        if (std::regex_search(t.name, ov.re)) {
          hit = &ov;
          break;
        }
      want = hit != nullptr ? hit->type : preset_choice(t, c, o, facts, k);
    }
    ch.wanted = want;
    ch.type = fallback_type(want, t.ne[0]);
    ch.fallback = ch.type != want;
    ch.quantize = ch.type != t.type;
    ch.needs_imatrix = requires_imatrix(ch.type) && c != Category::token_embd && c != Category::output;
    out.push_back(ch);
  }
  return out;
}

}  // namespace les::quant
