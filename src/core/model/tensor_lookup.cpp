#include "core/model/tensor_lookup.h"

#include <map>

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
  if ((cls == TypeClass::f32_only && t->type != GgmlType::F32) ||
      (cls == TypeClass::matrix && !matmul_type_supported(t->type)))
    problems_.push_back({name, t->type, cls});
  used_.insert(name);
  WeightView v;
  if (!validate_only_) {
    const std::span<const uint8_t> data = bytes(*t);
    if (data.size() < t->n_bytes || data.empty())
      return io_error("tensor '" + name + "' has no data in memory (file opened without mmap?)");
    v.data = data.data();
  }
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
  used_.insert(pname);
  const std::span<const uint8_t> data = validate_only_ ? std::span<const uint8_t>() : bytes(*t);
  if (!validate_only_ && (data.size() < t->n_bytes || data.empty()))
    return io_error("tensor '" + pname + "' has no data in memory (file opened without mmap?)");
  auto r = experts_->ranges(layer, 0);
  if (!r.ok()) return r.status();
  const ExpertMatrixInfo* m[3] = {&li.gate, &li.up, &li.down};
  const FileRange* fr[3] = {&r->gate, &r->up, &r->down};
  WeightView* out[3] = {gate, up, down};
  static const char* kNames[3] = {"gate", "up", "down"};
  for (int k = 0; k < 3; ++k) {
    if (!matmul_type_supported(m[k]->type))
      problems_.push_back({pname + "[" + kNames[k] + "]", m[k]->type, TypeClass::matrix});
    WeightView v;
    if (!validate_only_) v.data = data.data() + (fr[k]->offset - t->file_offset);
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

std::vector<std::string> TensorLookup::unused_tensors() const {
  std::vector<std::string> out;
  for (const auto& t : file_.tensors())
    if (used_.count(t.name) == 0) out.push_back(t.name);
  return out;
}

std::vector<std::string> describe_tensor_problems(const std::vector<TensorProblem>& problems) {
  std::vector<std::string> out;
  // Missing kernels grouped by type, in the order types first appear.
  std::vector<GgmlType> order;
  std::map<GgmlType, std::vector<std::string>> by_type;
  for (const TensorProblem& p : problems) {
    if (p.cls != TypeClass::matrix) continue;
    if (by_type.find(p.type) == by_type.end()) order.push_back(p.type);
    by_type[p.type].push_back(p.name);
  }
  for (GgmlType t : order) {
    const std::vector<std::string>& names = by_type[t];
    std::string list;
    for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", " : "") + names[i];
    if (names.size() > 3) list += ", ...";
    out.push_back(std::string("no kernel for ") + ggml_type_name(t) + ": " + std::to_string(names.size()) +
                  (names.size() == 1 ? " tensor (" : " tensors (") + list + ")");
  }
  for (const TensorProblem& p : problems)
    if (p.cls == TypeClass::f32_only)
      out.push_back("tensor '" + p.name + "' has type " + ggml_type_name(p.type) +
                    "; LES computes norms, biases and conv taps in F32 only (as llama.cpp's CPU backend does)");
  return out;
}

}  // namespace les
