// `les repack`: rewrites a GGUF model so that each routed expert (layer,
// expert) is one contiguous, 4 KiB-aligned blob (gate | up | down), i.e. one
// read instead of three. The output layout and its metadata are documented
// in core/gguf/expert_layout.h ("contiguous").
//
// What changes: general.alignment becomes 4096; per MoE layer the three
// tensors blk.L.ffn_{gate,up,down}_exps.weight are replaced by one I8 tensor
// blk.L.ffn_exps_packed.weight {blob_stride, n_expert}, placed where the gate
// tensor was; the les.expert_layout.* keys are added. What does not: every
// other key (in order) and every other tensor (name, type, shape, bytes).
// Each matrix's bytes are the original slab bytes, so computing on a
// repacked file gives bit-identical results.
//
// Why one I8 tensor per layer rather than per-expert tensors: 48 x 128 x 3
// tensor infos would bloat the header (and GGUF tools) for nothing, and an I8
// {stride, n_expert} tensor stays a valid, bounds-checked GGUF tensor whose
// row e is exactly blob e.
//
// Data is moved with positioned reads and writes in chunks of up to 64 MiB
// (no mapping), so memory stays at a few buffers for any file size.
//
// Thread-safety: pure functions of their arguments (each writes one file).
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace les {

struct RepackOptions {
  bool verify = true;  // after writing, compare every expert and dense tensor with the input (before OUT.tmp is renamed to OUT)
};

struct RepackReport {
  int32_t n_moe_layers = 0;
  int32_t n_expert = 0;
  uint64_t expert_bytes = 0;    // bytes of routed-expert matrices (excluding padding)
  uint64_t padding_bytes = 0;   // zero padding added after blobs
  uint64_t in_file_bytes = 0;
  uint64_t out_file_bytes = 0;
  uint64_t experts_verified = 0;  // 0 when !verify
};

// Repacks `in_path` into `out_path` (written to out_path + ".tmp" then
// renamed). Errors: io (cannot open / read / write, message names the path),
// format (malformed or truncated input, inconsistent expert tensors),
// invalid_argument (the input has no routed experts, is already contiguous,
// or in_path == out_path), unsupported (expert shapes that differ between
// layers), internal (verification found a difference: names the layer,
// expert and matrix; the output is removed).
Result<RepackReport> repack_experts(const std::string& in_path, const std::string& out_path,
                                    const RepackOptions& opts = {});

// Checks that `repacked_path` holds exactly `original_path`'s model: every
// expert's gate/up/down bytes, every other tensor's bytes, type and shape.
// Returns the number of experts compared. Errors: io, format (either file),
// invalid_argument (repacked_path is not in the contiguous layout),
// internal (a difference, naming the first one found).
Result<uint64_t> verify_repacked(const std::string& original_path, const std::string& repacked_path);

}  // namespace les
