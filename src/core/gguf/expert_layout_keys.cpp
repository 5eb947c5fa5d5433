// Metadata and geometry of the contiguous expert layout; see expert_layout_keys.h.
#include "core/gguf/expert_layout_keys.h"

#include <vector>

#include <fmt/format.h>

namespace les {

std::pair<int32_t, int> expert_tensor_role(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return {-1, -1};
  const size_t dot = name.find('.', 4);
  if (dot == std::string_view::npos || dot == 4) return {-1, -1};
  int32_t layer = 0;
  for (size_t i = 4; i < dot; ++i) {
    if (name[i] < '0' || name[i] > '9' || layer > 1000000) return {-1, -1};
    layer = layer * 10 + (name[i] - '0');
  }
  const std::string_view rest = name.substr(dot + 1);
  if (rest == "ffn_gate_exps.weight") return {layer, 0};
  if (rest == "ffn_up_exps.weight") return {layer, 1};
  if (rest == "ffn_down_exps.weight") return {layer, 2};
  return {-1, -1};
}

uint64_t contiguous_blob_stride(uint64_t expert_bytes) {
  return (expert_bytes + kExpertBlobAlignment - 1) / kExpertBlobAlignment * kExpertBlobAlignment;
}

bool is_expert_layout_key(std::string_view key) {
  return key == "general.alignment" || key.substr(0, std::string_view(kExpertLayoutKey).size()) == kExpertLayoutKey;
}

Status set_contiguous_layout_keys(gguf::GgufWriter& w, std::span<const LayerExpertInfo> layers) {
  LES_RETURN_IF_ERROR(w.set_alignment(kExpertBlobAlignment));
  LES_RETURN_IF_ERROR(w.set_string(kExpertLayoutKey, kExpertLayoutContiguous));
  LES_RETURN_IF_ERROR(w.set_u32(kExpertLayoutVersionKey, kExpertLayoutVersion));
  LES_RETURN_IF_ERROR(w.set_u32(kExpertLayoutBlobAlignmentKey, static_cast<uint32_t>(kExpertBlobAlignment)));
  int64_t n_embd = 0, n_ff = 0;
  std::vector<int64_t> gt, ut, dt;
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerExpertInfo& li = layers[l];
    if (!li.present) {
      gt.push_back(-1), ut.push_back(-1), dt.push_back(-1);
      continue;
    }
    if (n_embd == 0) n_embd = li.gate.cols, n_ff = li.gate.rows;
    if (li.gate.cols != n_embd || li.gate.rows != n_ff)
      return unsupported_error(fmt::format("layer {}: experts of {}x{} differ from earlier layers' {}x{}", l,
                                           li.gate.rows, li.gate.cols, n_ff, n_embd));
    gt.push_back(static_cast<int64_t>(li.gate.type));
    ut.push_back(static_cast<int64_t>(li.up.type));
    dt.push_back(static_cast<int64_t>(li.down.type));
  }
  LES_RETURN_IF_ERROR(w.set_u32(kExpertLayoutNEmbdKey, static_cast<uint32_t>(n_embd)));
  LES_RETURN_IF_ERROR(w.set_u32(kExpertLayoutNFfExpKey, static_cast<uint32_t>(n_ff)));
  LES_RETURN_IF_ERROR(w.set_array_ints(kExpertLayoutGateTypeKey, gguf::ValueType::INT32, gt));
  LES_RETURN_IF_ERROR(w.set_array_ints(kExpertLayoutUpTypeKey, gguf::ValueType::INT32, ut));
  LES_RETURN_IF_ERROR(w.set_array_ints(kExpertLayoutDownTypeKey, gguf::ValueType::INT32, dt));
  return Status();
}

}  // namespace les
