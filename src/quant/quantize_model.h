// Quantising a GGUF model: every tensor gets the type quant_plan.h chooses;
// quantised tensors are read, converted to F32 and requantised with the
// kernels' importance-weighted weight quantisers (kernels/weight_quantizers.h),
// optionally weighted by an imatrix; every other tensor is copied byte for
// byte. All metadata is copied in order; general.file_type,
// general.quantization_version (2) and, with an imatrix, the keys
// quantize.imatrix.file / .dataset (strings), .entries_count / .chunks_count
// (u32) are set, as llama-quantize does.
//
// Streaming: the input is read with positioned reads in slabs of whole rows
// (QuantizeParams::slab_bytes of F32 at most, one row at least) and the output
// written by gguf::GgufStreamWriter, so peak memory is a few slabs whatever
// the model's size. The output goes to OUT.tmp and is renamed at the end; on
// any error or cancellation the temporary file is removed.
//
// Layout: with QuantizeParams::layout = contiguous the routed experts are
// written straight into the contiguous per-expert layout that `les repack`
// produces (core/gguf/expert_layout.h: one 4 KiB-aligned blob gate | up | down
// per expert, general.alignment 4096, the les.expert_layout.* keys), in the
// same single pass: the file equals quantising per tensor and then repacking
// (verify_repacked() of the two holds).
//
// Thread-safety: one call per output file; `cancel` may be set from any
// thread (or a signal handler: it is a lock-free atomic).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "quant/imatrix_file.h"
#include "quant/quant_plan.h"
#include "util/status.h"

namespace les::quant {

struct QuantizeProgress {
  int64_t tensor_index = 0, n_tensors = 0;  // 1-based index of the tensor just finished
  uint64_t bytes_done = 0, bytes_total = 0;  // input bytes processed / to process
};

// Where the routed experts' bytes go in the output (core/gguf/expert_layout.h).
enum class OutputLayout {
  per_tensor,  // llama.cpp's: three 3-D tensors per MoE layer (any GGUF tool reads it)
  contiguous,  // LES's: one blob per expert, one read each (what streaming wants)
};

struct QuantizeParams {
  PlanOptions plan;
  OutputLayout layout = OutputLayout::per_tensor;
  const Imatrix* imatrix = nullptr;  // null: no importance weighting
  std::string imatrix_path;          // recorded as quantize.imatrix.file
  int n_threads = 1;
  uint64_t slab_bytes = 16ull << 20;  // F32 bytes converted at once
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(const QuantizeProgress&)> on_progress;  // after each tensor
  // One line per tensor ("[ 3/ 99] blk.0.attn_q.weight F16 -> Q4_K (fallback from Q3_K)").
  std::function<void(const std::string&)> on_tensor;
};

struct QuantizeReport {
  uint64_t in_bytes = 0, out_bytes = 0;  // file sizes
  int64_t n_quantized = 0, n_copied = 0, n_fallback = 0;
  int64_t n_imatrix_used = 0;  // tensors weighted by the imatrix
};

// Errors: invalid_argument (same input and output path; a tensor to quantise
// whose input type cannot be converted (only F32, F16, BF16 and Q8_0 can); a
// target type LES cannot produce; a target that needs an imatrix (IQ1/IQ2/
// IQ3_XXS) without one; an imatrix made for another model: an entry naming a
// tensor the model lacks, or of another width or expert count; an input
// already in the contiguous layout (quantise the original file); layout
// contiguous for a model without routed experts), unsupported (contiguous:
// expert shapes that differ between layers), io, format
// (malformed input), cancelled.
Result<QuantizeReport> quantize_model(const std::string& in_path, const std::string& out_path,
                                      const QuantizeParams& p);

}  // namespace les::quant
