// SlotLayout: where a routed expert's bytes go in an expert-cache slot, and
// the aligned reads that put them there.
//
// The file ranges come from core/gguf/expert_layout.h (ExpertLayout::ranges): three
// reads per expert in a plain GGUF (gate, up, down slabs of the 3-D tensors)
// or one 4 KiB-aligned blob in a `les repack` file. For O_DIRECT every read is
// widened to `alignment` (start rounded down, end rounded up and clamped to
// the file size); read k lands at the fixed, aligned area k of the slot, and
// the matrices start `pad` bytes in. One slot size fits every layer:
//   area_k = round_up(max over layers of read k's length, alignment) + alignment.
//
// Thread-safety: immutable after from_model; all members const-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/gguf/expert_layout.h"
#include "core/model/expert_source.h"
#include "core/model/model.h"
#include "util/status.h"

namespace les::sched {

// One aligned read of an expert into its slot.
struct SlotRead {
  uint64_t file_offset = 0;  // aligned start (bytes from file start)
  size_t length = 0;         // bytes to read
  size_t slot_offset = 0;    // where the read lands in the slot
};

struct SlotReads {
  std::array<SlotRead, 3> reads{};
  size_t n_reads = 0;
};

class SlotLayout {
 public:
  // Errors: invalid_argument (alignment not a power of two), unsupported (no
  // routed experts), format (from ExpertLayout::from_file; a range past the
  // end of the file).
  static Result<SlotLayout> from_model(const Model& model, size_t alignment);

  int32_t n_layer() const noexcept { return static_cast<int32_t>(layers_.size()); }
  int32_t n_expert() const noexcept { return n_expert_; }
  bool layer_has_experts(int32_t layer) const noexcept;
  bool contiguous() const noexcept { return file_layout_.contiguous(); }
  size_t slot_bytes() const noexcept { return slot_bytes_; }
  // Bytes of the expert's three matrices (without padding); 0 for a dense layer.
  size_t expert_bytes(int32_t layer) const noexcept;
  // The reads of (layer, expert). Errors: invalid_argument (out of range).
  Result<SlotReads> reads(int32_t layer, int32_t expert) const;
  // The matrices of (layer, expert) in a filled slot starting at `slot`
  // (same shapes and types as the model's WeightView::expert).
  // Errors: invalid_argument (out of range).
  Result<ExpertMatrices> matrices(int32_t layer, int32_t expert, const std::byte* slot) const;

 private:
  struct Layer {
    bool present = false;
    WeightView gate, up, down;  // 2-D templates (data set per use)
  };
  ExpertLayout file_layout_;
  std::vector<Layer> layers_;
  std::array<size_t, 3> area_offset_{};
  size_t slot_bytes_ = 0;
  size_t alignment_ = 4096;
  uint64_t file_size_ = 0;
  int32_t n_expert_ = 0;
};

}  // namespace les::sched
