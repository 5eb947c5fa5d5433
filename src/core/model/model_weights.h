// Weight tensors of a model as read-only views into the GGUF mapping, and the
// lookup that validates them (name, shape, type).
//
// Shapes follow ggml/GGUF: ne[0] is the contiguous dimension. A 2-D weight
// {ne0 = cols (input), ne1 = rows (output)} computes y[r] = sum_c W[r, c] x[c]
// (the kernels.h matmul convention). A 3-D expert tensor {cols, rows, n_expert}
// stores expert e as one contiguous slab at byte offset e * slab_bytes.
//
// Thread-safety: views are immutable; they stay valid while the GgufFile that
// owns the mapping is alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les {

namespace gguf {
class GgufFile;
}

// A 1-, 2- or 3-D tensor in memory. `data` is null for an absent optional tensor.
struct WeightView {
  const uint8_t* data = nullptr;
  GgmlType type = GgmlType::F32;
  int64_t ne[3] = {1, 1, 1};  // ne[0] cols, ne[1] rows, ne[2] experts
  size_t row_bytes = 0;       // bytes of one row of ne[0] elements
  // Bytes from one expert's matrix to the next in a 3-D expert view; 0 means
  // slab_bytes() (the per_tensor layout). A contiguous-layout file (see
  // core/expert_layout.h) interleaves gate | up | down per expert, so its
  // views step by the blob stride.
  size_t expert_stride = 0;
  std::string name;

  bool present() const noexcept { return data != nullptr; }
  int64_t cols() const noexcept { return ne[0]; }
  int64_t rows() const noexcept { return ne[1]; }
  size_t slab_bytes() const noexcept { return row_bytes * static_cast<size_t>(ne[1]); }
  const uint8_t* row(int64_t r) const noexcept { return data + static_cast<size_t>(r) * row_bytes; }
  // The 2-D matrix of expert e of a 3-D tensor (rows x cols), same type, at
  // data + e * (expert_stride ? expert_stride : slab_bytes()).
  WeightView expert(int64_t e) const;
};

// Which element types a tensor may have.
enum class TypeClass {
  f32_only,   // norms, biases, routers (F32 as convert_hf_to_gguf writes them)
  matrix,     // any type with a vec_dot kernel (F32, F16, BF16, Q4_0 ... Q6_K)
};

class ExpertLayout;

// Looks up tensors by name in a GGUF file and validates them.
class TensorLookup {
 public:
  // `experts`: the file's expert layout when it is the contiguous one (the
  // MoE loader then builds expert views from the packed tensors), else null.
  explicit TensorLookup(const gguf::GgufFile& file, const ExpertLayout* experts = nullptr)
      : file_(file), experts_(experts) {}

  // The tensor `name` with exactly the shape `ne` (trailing dims beyond ne.size()
  // must be 1). Errors: format "missing tensor 'x'", format "tensor 'x' has shape
  // [..], expected [..]", unsupported "tensor 'x' has type Q2_K, which ...".
  Result<WeightView> require(const std::string& name, std::initializer_list<int64_t> ne, TypeClass cls) const;
  // Same, but an absent tensor gives an empty view (present() == false).
  Result<WeightView> optional(const std::string& name, std::initializer_list<int64_t> ne, TypeClass cls) const;
  bool has(const std::string& name) const;

  // The routed experts of `layer` in a contiguous-layout file as three 3-D
  // views {cols, rows, n_expert} with expert_stride = the blob stride.
  // Errors: format (missing packed tensor / no experts in that layer, types
  // without a matrix kernel are unsupported), io (no mapping).
  // Precondition: contiguous_experts() != nullptr.
  Status packed_experts(int layer, WeightView* gate, WeightView* up, WeightView* down) const;
  const ExpertLayout* contiguous_experts() const noexcept { return experts_; }

 private:
  const gguf::GgufFile& file_;
  const ExpertLayout* experts_ = nullptr;
};

// Name of a per-layer tensor: blk_name(3, "attn_q.weight") == "blk.3.attn_q.weight".
std::string blk_name(int layer, const char* suffix);

}  // namespace les
