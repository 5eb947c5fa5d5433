// Expert byte ranges for the per_tensor and contiguous layouts; see expert_layout.h.
#include "core/gguf/expert_layout.h"

#include <fmt/format.h>

#include "core/gguf/gguf_reader.h"

namespace les {
namespace {

constexpr int64_t kMaxExperts = int64_t{1} << 20;  // expert ids are int32; far above any real model

std::string layer_tensor(int32_t layer, const char* suffix) {
  return fmt::format("blk.{}.{}", layer, suffix);
}

Result<int32_t> read_block_count(const gguf::GgufFile& f) {
  const std::string arch = f.architecture();
  if (arch.empty()) return format_error("missing metadata key 'general.architecture'");
  const std::string key = arch + ".block_count";
  LES_ASSIGN_OR_RETURN(uint64_t n, f.get_uint(key));
  if (n == 0 || n > 100000) return format_error(fmt::format("metadata key '{}' = {} is out of range", key, n));
  return static_cast<int32_t>(n);
}

// Matrix description of one expert slab of a 3-D tensor {cols, rows, n_expert}.
ExpertMatrixInfo matrix_of(const gguf::TensorInfo& t) {
  ExpertMatrixInfo m;
  m.type = t.type;
  m.cols = t.ne[0];
  m.rows = t.ne[1];
  m.row_bytes = t.row_bytes();
  m.bytes = m.row_bytes * static_cast<uint64_t>(m.rows);
  return m;
}

Result<ExpertMatrixInfo> matrix_from_type(int64_t type_id, int64_t cols, int64_t rows, const char* key, int32_t layer) {
  const auto traits = ggml_type_traits(static_cast<uint32_t>(type_id));
  if (type_id < 0 || !traits)
    return format_error(fmt::format("metadata key '{}'[{}] = {} is not a ggml type", key, layer, type_id));
  const auto rb = ggml_row_bytes(static_cast<GgmlType>(type_id), cols);
  if (!rb)
    return format_error(fmt::format("metadata key '{}'[{}]: {} rows of {} elements are not whole blocks", key, layer,
                                    traits->name, cols));
  ExpertMatrixInfo m;
  m.type = static_cast<GgmlType>(type_id);
  m.cols = cols;
  m.rows = rows;
  m.row_bytes = *rb;
  m.bytes = *rb * static_cast<uint64_t>(rows);
  return m;
}

Result<const gguf::Array*> int_array(const gguf::GgufFile& f, const char* key, int32_t n_layer) {
  LES_ASSIGN_OR_RETURN(const gguf::Array* a, f.get_array(key));
  if (a->elem_type != gguf::ValueType::INT32 || a->count != static_cast<uint64_t>(n_layer))
    return format_error(fmt::format("metadata key '{}' must be an INT32 array of {} entries (block_count), is {} of {}",
                                    key, n_layer, gguf::value_type_name(a->elem_type), a->count));
  return a;
}

}  // namespace

std::string packed_experts_tensor_name(int32_t layer) { return layer_tensor(layer, "ffn_exps_packed.weight"); }

Result<ExpertLayout> ExpertLayout::from_file(const gguf::GgufFile& f) {
  ExpertLayout x;
  LES_ASSIGN_OR_RETURN(const int32_t n_layer, read_block_count(f));
  LES_ASSIGN_OR_RETURN(const std::string kind, f.get_string_or(kExpertLayoutKey, "per_tensor"));
  x.layers_.resize(static_cast<size_t>(n_layer));
  x.bases_.resize(static_cast<size_t>(n_layer));

  if (kind == "per_tensor") {
    x.kind_ = ExpertLayoutKind::per_tensor;
    for (int32_t l = 0; l < n_layer; ++l) {
      const std::string ng = layer_tensor(l, "ffn_gate_exps.weight"), nu = layer_tensor(l, "ffn_up_exps.weight"),
                        nd = layer_tensor(l, "ffn_down_exps.weight");
      const gguf::TensorInfo* g = f.find_tensor(ng);
      const gguf::TensorInfo* u = f.find_tensor(nu);
      const gguf::TensorInfo* d = f.find_tensor(nd);
      if (!g && !u && !d) continue;
      if (!g || !u || !d)
        return format_error(fmt::format("layer {}: expert tensors incomplete (missing '{}')", l,
                                        !g ? ng : (!u ? nu : nd)));
      const int64_t E = g->ne[0], F = g->ne[1], X = g->ne[2];
      if (g->ne[3] != 1 || u->ne[3] != 1 || d->ne[3] != 1 || u->ne[0] != E || u->ne[1] != F || u->ne[2] != X ||
          d->ne[0] != F || d->ne[1] != E || d->ne[2] != X)
        return format_error(fmt::format("layer {}: expert tensor shapes disagree (gate [{}, {}, {}], up [{}, {}, {}], "
                                        "down [{}, {}, {}])",
                                        l, g->ne[0], g->ne[1], g->ne[2], u->ne[0], u->ne[1], u->ne[2], d->ne[0],
                                        d->ne[1], d->ne[2]));
      if (X > kMaxExperts) return format_error(fmt::format("layer {}: {} experts is out of range", l, X));
      if (x.n_expert_ != 0 && X != x.n_expert_)
        return format_error(fmt::format("layer {}: {} experts, earlier layers have {}", l, X, x.n_expert_));
      x.n_expert_ = static_cast<int32_t>(X);
      LayerExpertInfo& li = x.layers_[static_cast<size_t>(l)];
      li.present = true;
      li.gate = matrix_of(*g);
      li.up = matrix_of(*u);
      li.down = matrix_of(*d);
      li.expert_bytes = li.gate.bytes + li.up.bytes + li.down.bytes;
      x.bases_[static_cast<size_t>(l)] = {g->file_offset, u->file_offset, d->file_offset, 0};
      ++x.n_moe_layers_;
    }
    return x;
  }
  if (kind != kExpertLayoutContiguous)
    return unsupported_error(fmt::format("metadata key '{}' = '{}' is not a known expert layout (per_tensor, {})",
                                         kExpertLayoutKey, kind, kExpertLayoutContiguous));

  x.kind_ = ExpertLayoutKind::contiguous;
  LES_ASSIGN_OR_RETURN(const uint64_t version, f.get_uint(kExpertLayoutVersionKey));
  if (version != kExpertLayoutVersion)
    return unsupported_error(fmt::format("metadata key '{}' = {}: this build reads version {}", kExpertLayoutVersionKey,
                                         version, kExpertLayoutVersion));
  LES_ASSIGN_OR_RETURN(const uint64_t blob_align, f.get_uint(kExpertLayoutBlobAlignmentKey));
  if (blob_align != kExpertBlobAlignment)
    return format_error(fmt::format("metadata key '{}' = {}, expected {}", kExpertLayoutBlobAlignmentKey, blob_align,
                                    kExpertBlobAlignment));
  LES_ASSIGN_OR_RETURN(const uint64_t n_embd, f.get_uint(kExpertLayoutNEmbdKey));
  LES_ASSIGN_OR_RETURN(const uint64_t n_ff, f.get_uint(kExpertLayoutNFfExpKey));
  if (n_embd == 0 || n_ff == 0 || n_embd > (1u << 24) || n_ff > (1u << 24))
    return format_error(fmt::format("metadata keys '{}' = {} / '{}' = {} are out of range", kExpertLayoutNEmbdKey,
                                    n_embd, kExpertLayoutNFfExpKey, n_ff));
  LES_ASSIGN_OR_RETURN(const gguf::Array* gt, int_array(f, kExpertLayoutGateTypeKey, n_layer));
  LES_ASSIGN_OR_RETURN(const gguf::Array* ut, int_array(f, kExpertLayoutUpTypeKey, n_layer));
  LES_ASSIGN_OR_RETURN(const gguf::Array* dt, int_array(f, kExpertLayoutDownTypeKey, n_layer));
  const int64_t E = static_cast<int64_t>(n_embd), F = static_cast<int64_t>(n_ff);
  for (int32_t l = 0; l < n_layer; ++l) {
    const int64_t g = *gt->int_at(static_cast<uint64_t>(l)), u = *ut->int_at(static_cast<uint64_t>(l)),
                  d = *dt->int_at(static_cast<uint64_t>(l));
    const std::string pname = packed_experts_tensor_name(l);
    const gguf::TensorInfo* p = f.find_tensor(pname);
    if (g < 0 && u < 0 && d < 0) {
      if (p != nullptr) return format_error(fmt::format("tensor '{}' exists but layer {} has no expert types", pname, l));
      continue;
    }
    if (p == nullptr) return format_error(fmt::format("missing tensor '{}'", pname));
    LayerExpertInfo& li = x.layers_[static_cast<size_t>(l)];
    li.present = true;
    LES_ASSIGN_OR_RETURN(li.gate, matrix_from_type(g, E, F, kExpertLayoutGateTypeKey, l));
    LES_ASSIGN_OR_RETURN(li.up, matrix_from_type(u, E, F, kExpertLayoutUpTypeKey, l));
    LES_ASSIGN_OR_RETURN(li.down, matrix_from_type(d, F, E, kExpertLayoutDownTypeKey, l));
    li.expert_bytes = li.gate.bytes + li.up.bytes + li.down.bytes;
    li.blob_stride = (li.expert_bytes + kExpertBlobAlignment - 1) / kExpertBlobAlignment * kExpertBlobAlignment;
    if (p->type != GgmlType::I8 || p->n_dims != 2 || static_cast<uint64_t>(p->ne[0]) != li.blob_stride)
      return format_error(fmt::format("tensor '{}' must be I8 [{}, n_expert] (blob stride for its types), is {} [{}, {}]",
                                      pname, li.blob_stride, ggml_type_name(p->type), p->ne[0], p->ne[1]));
    if (p->file_offset % kExpertBlobAlignment != 0)
      return format_error(fmt::format("tensor '{}' starts at file offset {}, not a multiple of {}", pname,
                                      p->file_offset, kExpertBlobAlignment));
    const int64_t X = p->ne[1];
    if (X > kMaxExperts) return format_error(fmt::format("tensor '{}': {} experts is out of range", pname, X));
    if (x.n_expert_ != 0 && X != x.n_expert_)
      return format_error(fmt::format("layer {}: {} experts, earlier layers have {}", l, X, x.n_expert_));
    x.n_expert_ = static_cast<int32_t>(X);
    x.bases_[static_cast<size_t>(l)].packed = p->file_offset;
    ++x.n_moe_layers_;
  }
  return x;
}

Result<ExpertRanges> ExpertLayout::ranges(int32_t layer, int32_t expert) const {
  if (layer < 0 || layer >= n_layer())
    return invalid_argument_error(fmt::format("expert layer {} out of range [0, {})", layer, n_layer()));
  const LayerExpertInfo& li = layers_[static_cast<size_t>(layer)];
  if (!li.present) return invalid_argument_error(fmt::format("layer {} has no routed experts", layer));
  if (expert < 0 || expert >= n_expert_)
    return invalid_argument_error(fmt::format("expert {} of layer {} out of range [0, {})", expert, layer, n_expert_));
  const LayerBases& b = bases_[static_cast<size_t>(layer)];
  const uint64_t e = static_cast<uint64_t>(expert);
  ExpertRanges r;
  if (kind_ == ExpertLayoutKind::per_tensor) {
    r.gate = {b.gate + e * li.gate.bytes, li.gate.bytes};
    r.up = {b.up + e * li.up.bytes, li.up.bytes};
    r.down = {b.down + e * li.down.bytes, li.down.bytes};
    r.reads = {r.gate, r.up, r.down};
    r.read_dest_offset = {0, li.gate.bytes, li.gate.bytes + li.up.bytes};
    r.n_reads = 3;
  } else {
    const uint64_t blob = b.packed + e * li.blob_stride;
    r.gate = {blob, li.gate.bytes};
    r.up = {blob + li.gate.bytes, li.up.bytes};
    r.down = {blob + li.gate.bytes + li.up.bytes, li.down.bytes};
    r.reads[0] = {blob, li.expert_bytes};
    r.read_dest_offset[0] = 0;
    r.n_reads = 1;
  }
  return r;
}

}  // namespace les
