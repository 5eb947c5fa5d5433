// Which type each tensor of a model gets when quantising: presets (llama.cpp's
// per-tensor choices for Q8_0, Q4_K_M and Q3_K_M, and LES's mixed recipes),
// user overrides, and the fallbacks for rows whose length is not a multiple
// of the target's block.
//
// Rules, as llama-quantize (llama.cpp 81ff7abe, src/llama-quant.cpp) applies
// them for these presets:
// - Only tensors with >= 2 dims whose name ends in "weight" are quantised,
//   except *_norm.weight, ffn_gate_inp.weight (routers) and a few small
//   special tensors; the rest keep their type.
// - token_embd / output: --token-embedding-type / --output-tensor-type if
//   given (used as they are); otherwise output becomes Q6_K (Q8_0 stays Q8_0;
//   Q8_0 when its rows are not a multiple of the block).
// - --tensor-type REGEX=TYPE: the first pattern found (regex search) in the
//   name wins over the preset's choice.
// - Q4_K_M: attn_v (and attn_qkv-like) Q6_K for "more bits" layers of the
//   attn_v count (i < n/8, i >= 7n/8, (i - n/8) % 3 == 2), ffn_down* Q6_K for
//   such layers (layer from the name); Q3_K_M: attn_v Q5_K for the first two,
//   else Q4_K; ffn_down* Q5_K for layers < n/16 else Q4_K; attn_output Q4_K;
//   models with exactly 8 experts: attn_v and attn_k Q8_0, and attn_output
//   Q5_K (Q3_K_M, Q4_K_M, IQ4_XS).
// - IQ4_XS: output Q6_K; attn_v Q5_K when n_head / n_head_kv >= 4; ffn_down*
//   Q5_K in layers < n/8 when there is no imatrix; the rest IQ4_XS.
// - MXFP4_MOE: every 3-D tensor (ne[2] > 1: the routed experts) MXFP4, every
//   other quantisable tensor Q8_0, token_embd and output included.
// - IQ3_XXS (imatrix required): output Q5_K, token_embd IQ3_S, attn_q and
//   attn_k IQ2_S, attn_output IQ3_S, attn_v Q4_K when n_gqa >= 4 else
//   IQ3_XXS, everything else IQ3_XXS; with exactly 8 experts attn_v and
//   attn_k Q8_0 and attn_output Q5_K.
// - IQ2_XXS (imatrix required): output Q5_K, token_embd Q2_K, attn_v Q4_K
//   when n_gqa >= 4 or n_expert >= 4 else Q2_K, ffn_down* Q2_K for the first
//   n_layer / 8 of them (in order), attn_k Q4_K and attn_output Q5_K with
//   exactly 8 experts, everything else IQ2_XXS.
// - les-mixed: routed experts (ffn_{gate,up,down}_exps) Q3_K, every other
//   quantisable tensor Q4_K, output and token_embd included.
//   les-mixed-down4: the same with ffn_down_exps Q4_K.
//   les-mixed-iq3: routed experts IQ3_XXS, the rest Q4_K.
//   les-mixed-iq2: routed experts IQ2_XXS, or IQ2_XS for those named in
//   PlanOptions::iq2_xs_experts (quantize_model picks them from the imatrix:
//   quant/expert_bits.h), the rest Q4_K. The IQ2/IQ3 presets need an imatrix.
// - Fallbacks when ne[0] is not a multiple of the block: Q3_K/Q2_K -> Q4_0,
//   Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, IQ types -> IQ4_NL; F16 if still
//   not a multiple.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les::quant {

enum class Preset {
  q8_0,
  q4_k_m,
  q3_k_m,
  les_mixed,
  les_mixed_down4,
  iq4_xs,
  mxfp4_moe,
  iq3_xxs,
  iq2_xxs,
  les_mixed_iq3,
  les_mixed_iq2
};

// Parses "q8_0", "q4_k_m", "q3_k_m", "les-mixed", "les-mixed-down4", "iq4_xs",
// "mxfp4_moe", "iq3_xxs", "iq2_xxs", "les-mixed-iq3", "les-mixed-iq2" (any case).
std::optional<Preset> preset_from_name(const std::string& name);
const char* preset_name(Preset p);
// Every preset name, in the order above, comma-separated (for messages).
const char* preset_names();
// general.file_type (llama_ftype) the preset records: 7 (MOSTLY_Q8_0), 15
// (MOSTLY_Q4_K_M), 12 (MOSTLY_Q3_K_M), 30 (MOSTLY_IQ4_XS), 38 (MOSTLY_MXFP4_MOE),
// 23 (MOSTLY_IQ3_XXS), 19 (MOSTLY_IQ2_XXS);
// the les-mixed presets record 14
// (MOSTLY_Q4_K_S), the base type of the recipe, as llama-quantize does for
// the fixture's mixed file.
uint32_t preset_file_type(Preset p);

struct TypeOverride {
  std::string pattern;  // as given
  std::regex re;
  GgmlType type;
};

struct PlanOptions {
  Preset preset = Preset::q8_0;
  std::vector<TypeOverride> overrides;  // --tensor-type, in order
  std::optional<GgmlType> output_type;  // --output-tensor-type
  std::optional<GgmlType> token_embd_type;  // --token-embedding-type
  std::vector<std::string> iq2_xs_experts;  // les-mixed-iq2: routed-expert tensors that get IQ2_XS
};

// Parses "REGEX=TYPE". Errors: invalid_argument (no '=', bad regex, unknown type).
Result<TypeOverride> parse_type_override(const std::string& spec);
// A type name ("q4_k", "Q8_0", "f16"; any case). Errors: invalid_argument listing the spelling.
Result<GgmlType> parse_type_name(const std::string& name);

struct TensorShape {
  std::string name;
  GgmlType type = GgmlType::F32;
  int n_dims = 1;
  int64_t ne[4] = {1, 1, 1, 1};
};

struct TensorChoice {
  GgmlType type = GgmlType::F32;
  bool quantize = false;   // false: copied as is
  bool fallback = false;   // the wanted type did not fit the rows
  GgmlType wanted = GgmlType::F32;
  bool needs_imatrix = false;  // IQ1/IQ2/IQ3_XXS targets
};

// The type of every tensor, in order. n_layer: the model's block count;
// n_expert: its expert count (0 dense); n_gqa: n_head / n_head_kv (IQ4_XS's
// attn_v rule); has_imatrix: whether an importance matrix is given (IQ4_XS's
// ffn_down rule).
std::vector<TensorChoice> plan_types(const std::vector<TensorShape>& tensors, const PlanOptions& o, int n_layer,
                                     int n_expert, int n_gqa = 1, bool has_imatrix = false);

// True if tensor `name` with `n_dims` dims may be quantised at all (see above).
bool tensor_allows_quantization(const std::string& name, int n_dims);

// The fallback for a type whose block does not divide ne0; the type itself if it does.
GgmlType fallback_type(GgmlType wanted, int64_t ne0);

}  // namespace les::quant
