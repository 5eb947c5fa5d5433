// WeightView: a weight tensor of a model as a read-only view into memory (the
// GGUF mapping).
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
#include <string>

#include "kernels/ggml_type.h"

namespace les {

// A 1-, 2- or 3-D tensor in memory. `data` is null for an absent optional tensor.
struct WeightView {
  const uint8_t* data = nullptr;
  GgmlType type = GgmlType::F32;
  int64_t ne[3] = {1, 1, 1};  // ne[0] cols, ne[1] rows, ne[2] experts
  size_t row_bytes = 0;       // bytes of one row of ne[0] elements
  // Bytes from one expert's matrix to the next in a 3-D expert view; 0 means
  // slab_bytes() (the per_tensor layout). A contiguous-layout file (see
  // core/gguf/expert_layout.h) interleaves gate | up | down per expert, so its
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

}  // namespace les
