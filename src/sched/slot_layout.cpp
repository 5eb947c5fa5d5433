#include "sched/slot_layout.h"

#include <algorithm>
#include <string>

#include "core/gguf/gguf_reader.h"

namespace les::sched {
namespace {

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

}  // namespace

Result<SlotLayout> SlotLayout::from_model(const Model& model, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return invalid_argument_error("slot layout alignment " + std::to_string(alignment) + " is not a power of two");
  if (!model.hparams().is_moe()) return unsupported_error("model has no routed experts to stream");
  SlotLayout out;
  LES_ASSIGN_OR_RETURN(out.file_layout_, ExpertLayout::from_file(model.file()));
  if (out.file_layout_.n_moe_layers() == 0) return unsupported_error("model has no routed experts to stream");
  out.alignment_ = alignment;
  out.file_size_ = model.file().file_size();
  out.n_expert_ = out.file_layout_.n_expert();
  std::array<size_t, 3> max_len{};
  const auto& W = model.weights().layers;
  for (int32_t l = 0; l < out.file_layout_.n_layer(); ++l) {
    Layer L;
    if (out.file_layout_.layer(l).present && static_cast<size_t>(l) < W.size() && W[static_cast<size_t>(l)].is_moe()) {
      L.present = true;
      const LayerWeights& lw = W[static_cast<size_t>(l)];
      L.gate = lw.gate_exps.expert(0);
      L.up = lw.up_exps.expert(0);
      L.down = lw.down_exps.expert(0);
      L.gate.data = L.up.data = L.down.data = nullptr;
      // Every expert of a layer has reads of the same lengths: size areas from the largest.
      for (int32_t e : {0, out.n_expert_ - 1}) {
        LES_ASSIGN_OR_RETURN(ExpertRanges r, out.file_layout_.ranges(l, e));
        for (size_t k = 0; k < r.n_reads; ++k) {
          if (r.reads[k].end() > out.file_size_)
            return format_error("expert " + std::to_string(e) + " of layer " + std::to_string(l) +
                                " extends past the end of the file");
          max_len[k] = std::max(max_len[k], static_cast<size_t>(r.reads[k].length));
        }
      }
    }
    out.layers_.push_back(std::move(L));
  }
  size_t off = 0;
  for (size_t k = 0; k < 3; ++k) {
    out.area_offset_[k] = off;
    if (max_len[k] > 0) off += round_up(max_len[k], alignment) + alignment;
  }
  out.slot_bytes_ = off;
  return out;
}

bool SlotLayout::layer_has_experts(int32_t layer) const noexcept {
  return layer >= 0 && layer < n_layer() && layers_[static_cast<size_t>(layer)].present;
}

size_t SlotLayout::expert_bytes(int32_t layer) const noexcept {
  if (!layer_has_experts(layer)) return 0;
  return static_cast<size_t>(file_layout_.layer(layer).expert_bytes);
}

Result<SlotReads> SlotLayout::reads(int32_t layer, int32_t expert) const {
  if (!layer_has_experts(layer)) return invalid_argument_error("layer " + std::to_string(layer) + " has no experts");
  LES_ASSIGN_OR_RETURN(ExpertRanges r, file_layout_.ranges(layer, expert));
  SlotReads out;
  out.n_reads = r.n_reads;
  for (size_t k = 0; k < r.n_reads; ++k) {
    const uint64_t begin = r.reads[k].offset;
    const uint64_t a0 = begin / alignment_ * alignment_;
    const uint64_t end = std::min<uint64_t>(round_up(r.reads[k].end(), alignment_), file_size_);
    out.reads[k].file_offset = a0;
    out.reads[k].length = static_cast<size_t>(end - a0);
    out.reads[k].slot_offset = area_offset_[k];
  }
  return out;
}

Result<ExpertMatrices> SlotLayout::matrices(int32_t layer, int32_t expert, const std::byte* slot) const {
  if (!layer_has_experts(layer)) return invalid_argument_error("layer " + std::to_string(layer) + " has no experts");
  LES_ASSIGN_OR_RETURN(ExpertRanges r, file_layout_.ranges(layer, expert));
  const Layer& L = layers_[static_cast<size_t>(layer)];
  ExpertMatrices m{L.gate, L.up, L.down};
  auto place = [&](const FileRange& fr) -> const uint8_t* {
    for (size_t k = 0; k < r.n_reads; ++k)
      if (fr.offset >= r.reads[k].offset && fr.end() <= r.reads[k].end()) {
        const uint64_t a0 = r.reads[k].offset / alignment_ * alignment_;
        return reinterpret_cast<const uint8_t*>(slot + area_offset_[k] + (fr.offset - a0));
      }
    return nullptr;
  };
  m.gate.data = place(r.gate);
  m.up.data = place(r.up);
  m.down.data = place(r.down);
  if (!m.gate.data || !m.up.data || !m.down.data)
    return internal_error("expert " + std::to_string(expert) + " of layer " + std::to_string(layer) +
                          ": a matrix lies outside its reads");
  return m;
}

}  // namespace les::sched
