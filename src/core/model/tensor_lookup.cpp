#include "core/model/tensor_lookup.h"

#include "core/gguf/expert_layout.h"
#include "core/gguf/gguf_reader.h"
#include "core/gguf/tensor_arena.h"
#include "core/model/weight_matmul.h"

namespace les {

std::string blk_name(int layer, const char* suffix) { return "blk." + std::to_string(layer) + "." + suffix; }

namespace {
std::string shape_str(const int64_t* ne, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}
}  // namespace

bool TensorLookup::has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

std::span<const uint8_t> TensorLookup::bytes(const gguf::TensorInfo& t) const {
  if (arena_ != nullptr)
    if (auto b = arena_->find(t); !b.empty()) return b;
  return file_.tensor_data(t);
}

Result<WeightView> TensorLookup::optional(const std::string& name, std::initializer_list<int64_t> ne,
                                          TypeClass cls) const {
  if (!has(name)) return WeightView{};
  return require(name, ne, cls);
}

Result<WeightView> TensorLookup::require(const std::string& name, std::initializer_list<int64_t> ne,
                                         TypeClass cls) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) return format_error("missing tensor '" + name + "'");
  const size_t nd = ne.size();
  bool ok = nd <= 3;
  size_t i = 0;
  for (int64_t want : ne) ok = ok && t->ne[i++] == want;
  for (size_t j = nd; j < gguf::kMaxDims; ++j) ok = ok && t->ne[j] == 1;
  if (!ok) {
    return format_error("tensor '" + name + "' has shape " + shape_str(t->ne.data(), std::max<size_t>(t->n_dims, 1)) +
                        ", expected " + shape_str(std::data(ne), nd));
  }
  if (cls == TypeClass::f32_only && t->type != GgmlType::F32)
    return unsupported_error("tensor '" + name + "' has type " + ggml_type_name(t->type) + ", expected F32");
  if (cls == TypeClass::matrix && !matmul_type_supported(t->type))
    return unsupported_error("tensor '" + name + "' has type " + ggml_type_name(t->type) +
                             ", which has no matrix kernel");
  const std::span<const uint8_t> data = bytes(*t);
  if (data.size() < t->n_bytes || data.empty())
    return io_error("tensor '" + name + "' has no data in memory (file opened without mmap?)");
  WeightView v;
  v.data = data.data();
  v.type = t->type;
  for (size_t j = 0; j < 3; ++j) v.ne[j] = t->ne[j];
  v.row_bytes = static_cast<size_t>(t->row_bytes());
  v.name = name;
  return v;
}

Status TensorLookup::packed_experts(int layer, WeightView* gate, WeightView* up, WeightView* down) const {
  const std::string pname = packed_experts_tensor_name(layer);
  if (experts_ == nullptr || layer < 0 || layer >= experts_->n_layer() || !experts_->layer(layer).present)
    return format_error("layer " + std::to_string(layer) + " has no packed experts ('" + pname + "')");
  const LayerExpertInfo& li = experts_->layer(layer);
  const gguf::TensorInfo* t = file_.find_tensor(pname);
  if (t == nullptr) return format_error("missing tensor '" + pname + "'");
  const std::span<const uint8_t> data = bytes(*t);
  if (data.size() < t->n_bytes || data.empty())
    return io_error("tensor '" + pname + "' has no data in memory (file opened without mmap?)");
  auto r = experts_->ranges(layer, 0);
  if (!r.ok()) return r.status();
  const ExpertMatrixInfo* m[3] = {&li.gate, &li.up, &li.down};
  const FileRange* fr[3] = {&r->gate, &r->up, &r->down};
  WeightView* out[3] = {gate, up, down};
  static const char* kNames[3] = {"gate", "up", "down"};
  for (int k = 0; k < 3; ++k) {
    if (!matmul_type_supported(m[k]->type))
      return unsupported_error("packed experts '" + pname + "': " + kNames[k] + " type " +
                               ggml_type_name(m[k]->type) + " has no matrix kernel");
    WeightView v;
    v.data = data.data() + (fr[k]->offset - t->file_offset);
    v.type = m[k]->type;
    v.ne[0] = m[k]->cols;
    v.ne[1] = m[k]->rows;
    v.ne[2] = experts_->n_expert();
    v.row_bytes = static_cast<size_t>(m[k]->row_bytes);
    v.expert_stride = static_cast<size_t>(li.blob_stride);
    v.name = pname + "[" + kNames[k] + "]";
    *out[k] = std::move(v);
  }
  return Status();
}

}  // namespace les
