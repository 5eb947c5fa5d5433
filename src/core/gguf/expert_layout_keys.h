// Writing the contiguous expert layout (core/gguf/expert_layout.h): the
// metadata that describes it, the blob stride, and which tensors it replaces.
// Shared by the two writers of that layout: `les repack` (expert_repack.h,
// which moves an existing file's bytes) and `les quantize --layout contiguous`
// (quant/quantize_model.h, which writes freshly quantised experts straight
// into their blobs).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "core/gguf/expert_layout.h"
#include "core/gguf/gguf_writer.h"
#include "util/status.h"

namespace les {

// Which routed-expert matrix a tensor name holds: "blk.L.ffn_gate_exps.weight"
// -> {L, 0}, up -> {L, 1}, down -> {L, 2}; {-1, -1} for any other name
// (including layer numbers above 1,000,000).
std::pair<int32_t, int> expert_tensor_role(std::string_view name);

// Bytes between consecutive blobs of a layer whose experts take
// `expert_bytes` (gate + up + down): expert_bytes rounded up to
// kExpertBlobAlignment (4096). 0 for 0.
uint64_t contiguous_blob_stride(uint64_t expert_bytes);

// True for the keys the layout owns (general.alignment and every
// les.expert_layout* key): a writer of the layout drops them from the input's
// metadata and sets them with set_contiguous_layout_keys().
bool is_expert_layout_key(std::string_view key);

// Sets general.alignment = 4096 and the les.expert_layout.* keys for
// `layers` (one entry per block, {arch}.block_count of them; entries with
// present = false are layers without routed experts: type -1). Errors:
// unsupported (experts of one layer shaped differently from an earlier
// layer's: n_embd x n_ff_exp must be the same everywhere), and the writer's
// own (invalid_argument for a key set twice with another type).
Status set_contiguous_layout_keys(gguf::GgufWriter& w, std::span<const LayerExpertInfo> layers);

}  // namespace les
