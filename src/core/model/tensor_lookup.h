// TensorLookup: finds a model's weight tensors by name in a GGUF file and
// validates them (shape, element type, bytes in memory) into WeightViews
// (weight_view.h); the architecture loaders (arch/) use it. blk_name() spells
// per-layer tensor names.
//
// Thread-safety: thread-compatible (lookups record what they hand out); one
// TensorLookup per model load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <unordered_set>
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
  // Norm weights, biases, conv taps: F32 only. convert_hf_to_gguf and
  // llama-quantize keep every 1-D tensor F32, and llama.cpp's CPU backend
  // multiplies and adds them only as F32 (its binary ops take no F32 x F16 pair).
  f32_only,
  // Any type with a vec_dot kernel (F32, F16, BF16, Q4_0 ... Q6_K, ...):
  // weight matrices, and the routers and shared-expert gates llama.cpp also
  // computes with mul_mat, so an F16, BF16 or Q8_0 router works as there.
  matrix,
};

// A tensor TensorLookup handed out although LES cannot compute with it (a
// type without a kernel, or a norm that is not F32). The loader collects them
// all and refuses the model with every one (Model::from_gguf).
struct TensorProblem {
  std::string name;
  GgmlType type;
  TypeClass cls;
};

class ExpertLayout;
namespace gguf {
class TensorArena;
struct TensorInfo;
}

// Looks up tensors by name in a GGUF file and validates them, recording
// which tensors it handed out (so the loader can refuse tensors no
// architecture code reads) and the type problems it let pass.
class TensorLookup {
 public:
  // `experts`: the file's expert layout when it is the contiguous one (the
  // MoE loader then builds expert views from the packed tensors), else null.
  // `arena`: tensors read into memory (gguf/tensor_arena.h); views of the
  // tensors it holds point there, the others into the file's mapping.
  // `validate_only`: check names, shapes and types without touching tensor
  // bytes (views get data == null): the loader's first pass, which must see
  // every problem before it reads weights.
  explicit TensorLookup(const gguf::GgufFile& file, const ExpertLayout* experts = nullptr,
                        const gguf::TensorArena* arena = nullptr, bool validate_only = false)
      : file_(file), experts_(experts), arena_(arena), validate_only_(validate_only) {}

  // The tensor `name` with exactly the shape `ne` (trailing dims beyond ne.size()
  // must be 1). Errors: format "missing tensor 'x'", format "tensor 'x' has shape
  // [..], expected [..]". A type `cls` does not allow is not an error here: the
  // view is returned and the tensor recorded in problems().
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

  // Tensors handed out with a type their use does not allow, in lookup order.
  const std::vector<TensorProblem>& problems() const noexcept { return problems_; }
  // Names of the file's tensors that no require / optional / packed_experts
  // returned, in file order.
  std::vector<std::string> unused_tensors() const;

 private:
  // The tensor's bytes: from the arena when it holds them, else the mapping.
  std::span<const uint8_t> bytes(const gguf::TensorInfo& t) const;

  const gguf::GgufFile& file_;
  const ExpertLayout* experts_ = nullptr;
  const gguf::TensorArena* arena_ = nullptr;
  bool validate_only_ = false;
  mutable std::vector<TensorProblem> problems_;
  mutable std::unordered_set<std::string> used_;
};

// One sentence per kind of TensorProblem: "no kernel for IQ2_XXS: 96 tensors
// (blk.0.ffn_gate_exps.weight, ...)", "tensor 'x' has type F16; LES computes
// norms, biases and conv taps in F32 only (as llama.cpp's CPU backend does)".
std::vector<std::string> describe_tensor_problems(const std::vector<TensorProblem>& problems);

// Name of a per-layer tensor: blk_name(3, "attn_q.weight") == "blk.3.attn_q.weight".
std::string blk_name(int layer, const char* suffix);

}  // namespace les
