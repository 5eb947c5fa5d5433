// TensorLookup: finds a model's weight tensors by name in a GGUF file and
// validates them (shape, element type, bytes in memory) into WeightViews
// (weight_view.h); the architecture loaders (arch/) use it. blk_name() spells
// per-layer tensor names.
//
// Thread-safety: const and stateless over an immutable GgufFile: any number
// of threads may look up at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "core/model/weight_view.h"
#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les {

namespace gguf {
class GgufFile;
}

// Which element types a tensor may have.
enum class TypeClass {
  f32_only,   // norms, biases, routers (F32 as convert_hf_to_gguf writes them)
  matrix,     // any type with a vec_dot kernel (F32, F16, BF16, Q4_0 ... Q6_K)
};

class ExpertLayout;
namespace gguf {
class TensorArena;
struct TensorInfo;
}

// Looks up tensors by name in a GGUF file and validates them.
class TensorLookup {
 public:
  // `experts`: the file's expert layout when it is the contiguous one (the
  // MoE loader then builds expert views from the packed tensors), else null.
  // `arena`: tensors read into memory (gguf/tensor_arena.h); views of the
  // tensors it holds point there, the others into the file's mapping.
  explicit TensorLookup(const gguf::GgufFile& file, const ExpertLayout* experts = nullptr,
                        const gguf::TensorArena* arena = nullptr)
      : file_(file), experts_(experts), arena_(arena) {}

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
  // The tensor's bytes: from the arena when it holds them, else the mapping.
  std::span<const uint8_t> bytes(const gguf::TensorInfo& t) const;

  const gguf::GgufFile& file_;
  const ExpertLayout* experts_ = nullptr;
  const gguf::TensorArena* arena_ = nullptr;
};

// Name of a per-layer tensor: blk_name(3, "attn_q.weight") == "blk.3.attn_q.weight".
std::string blk_name(int layer, const char* suffix);

}  // namespace les
