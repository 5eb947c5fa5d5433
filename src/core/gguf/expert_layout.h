// Where the bytes of one routed expert (layer, expert) live in a GGUF file,
// for either of the two expert layouts LES reads.
//
// 1. per_tensor (every llama.cpp file): three 3-D tensors per MoE layer,
//      blk.L.ffn_gate_exps.weight {n_embd,   n_ff_exp, n_expert}
//      blk.L.ffn_up_exps.weight   {n_embd,   n_ff_exp, n_expert}
//      blk.L.ffn_down_exps.weight {n_ff_exp, n_embd,   n_expert}
//    Expert e of a tensor is the slab at tensor offset e * slab_bytes
//    (slab_bytes = row_bytes(type, ne0) * ne1), so an expert is 3 reads.
//
// 2. contiguous (written by `les repack`, core/gguf/expert_repack.h): one tensor
//    per MoE layer,
//      blk.L.ffn_exps_packed.weight  type I8, ne = {blob_stride, n_expert}
//    whose row e is the blob of expert e:
//      [0, gate_bytes)                      gate matrix {n_embd -> n_ff_exp}
//      [gate_bytes, +up_bytes)              up matrix
//      [gate_bytes + up_bytes, +down_bytes) down matrix {n_ff_exp -> n_embd}
//      zero padding up to blob_stride
//    Each matrix keeps its original type and row layout (the slab bytes of
//    the original tensor, unchanged). blob_stride is expert_bytes rounded up
//    to 4096, and general.alignment is 4096, so every blob starts at a
//    4 KiB-aligned absolute file offset and one expert is one read (its
//    stride-long span can be read with O_DIRECT as is).
//    Metadata (all required when les.expert_layout is "contiguous"):
//      les.expert_layout                STRING "contiguous" (absent = per_tensor)
//      les.expert_layout.version        UINT32 1
//      les.expert_layout.blob_alignment UINT32 4096
//      les.expert_layout.n_embd         UINT32 (gate/up cols, down rows)
//      les.expert_layout.n_ff_exp       UINT32 (gate/up rows, down cols)
//      les.expert_layout.gate_type / .up_type / .down_type
//                                       INT32 arrays, one entry per block
//                                       ({arch}.block_count): the ggml type
//                                       id of that matrix, -1 for a layer
//                                       without routed experts
//    The I8 tensor keeps the file a valid GGUF that generic tools list and
//    bounds-check; llama.cpp itself will not load the model (its expert
//    tensors are gone), which is why the original file is kept as is.
//
// All offsets here are absolute file offsets (what pread / the I/O reactor
// takes), not data-section-relative.
//
// Thread-safety: immutable after from_file(); all const members are safe to
// call from several threads.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les {

namespace gguf {
class GgufFile;
}

// Metadata keys and values of the contiguous layout (see the top of this file).
inline constexpr const char* kExpertLayoutKey = "les.expert_layout";
inline constexpr const char* kExpertLayoutContiguous = "contiguous";
inline constexpr const char* kExpertLayoutVersionKey = "les.expert_layout.version";
inline constexpr const char* kExpertLayoutBlobAlignmentKey = "les.expert_layout.blob_alignment";
inline constexpr const char* kExpertLayoutNEmbdKey = "les.expert_layout.n_embd";
inline constexpr const char* kExpertLayoutNFfExpKey = "les.expert_layout.n_ff_exp";
inline constexpr const char* kExpertLayoutGateTypeKey = "les.expert_layout.gate_type";
inline constexpr const char* kExpertLayoutUpTypeKey = "les.expert_layout.up_type";
inline constexpr const char* kExpertLayoutDownTypeKey = "les.expert_layout.down_type";
inline constexpr uint32_t kExpertLayoutVersion = 1;
inline constexpr uint64_t kExpertBlobAlignment = 4096;

// "blk.L.ffn_exps_packed.weight"
std::string packed_experts_tensor_name(int32_t layer);

// A byte range of the file: [offset, offset + length), absolute offsets.
struct FileRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t end() const noexcept { return offset + length; }
};

enum class ExpertLayoutKind { per_tensor, contiguous };

// One expert's matrix: `rows` rows of `cols` elements of `type`, row-major,
// row_bytes each (ggml row encoding); bytes = row_bytes * rows.
struct ExpertMatrixInfo {
  GgmlType type = GgmlType::F32;
  int64_t cols = 0;
  int64_t rows = 0;
  uint64_t row_bytes = 0;
  uint64_t bytes = 0;
};

// The routed experts of one layer (all experts of a layer share types and shapes).
struct LayerExpertInfo {
  bool present = false;   // false: the layer has no routed experts (dense layer)
  ExpertMatrixInfo gate;  // {cols n_embd, rows n_ff_exp}
  ExpertMatrixInfo up;    // {cols n_embd, rows n_ff_exp}
  ExpertMatrixInfo down;  // {cols n_ff_exp, rows n_embd}
  uint64_t expert_bytes = 0;  // gate.bytes + up.bytes + down.bytes
  uint64_t blob_stride = 0;   // contiguous: bytes between blobs (multiple of 4096); per_tensor: 0
};

// Where expert (layer, expert) is in the file.
struct ExpertRanges {
  FileRange gate, up, down;  // each matrix's bytes (lengths = ExpertMatrixInfo::bytes)
  // The reads that fetch the expert, in file order: 3 (per_tensor: gate, up,
  // down) or 1 (contiguous: the blob [gate.offset, down.end()), which starts
  // 4 KiB-aligned). Read k lands at `read_dest_offset[k]` of a buffer laid out
  // as gate | up | down (no gaps), so after the reads the buffer matches the
  // contiguous blob in both layouts.
  std::array<FileRange, 3> reads{};
  std::array<uint64_t, 3> read_dest_offset{};
  size_t n_reads = 0;
  std::span<const FileRange> read_ranges() const noexcept { return {reads.data(), n_reads}; }
};

class ExpertLayout {
 public:
  // Reads the layout of `file`'s experts from its metadata and tensor table
  // (no tensor data is touched; a file opened without mmap works). Errors:
  // format (inconsistent expert tensors: one of gate/up/down missing, shapes
  // that disagree, contiguous-layout keys missing or of the wrong type, a
  // packed tensor of the wrong type/shape/alignment), unsupported (a
  // les.expert_layout value or version this build does not know). A file
  // without any routed experts is not an error: n_moe_layers() == 0.
  static Result<ExpertLayout> from_file(const gguf::GgufFile& file);

  ExpertLayoutKind kind() const noexcept { return kind_; }
  bool contiguous() const noexcept { return kind_ == ExpertLayoutKind::contiguous; }
  int32_t n_layer() const noexcept { return static_cast<int32_t>(layers_.size()); }  // {arch}.block_count
  int32_t n_expert() const noexcept { return n_expert_; }       // 0 when no layer has experts
  int32_t n_moe_layers() const noexcept { return n_moe_layers_; }

  // Per-layer description. Precondition: 0 <= layer < n_layer().
  const LayerExpertInfo& layer(int32_t layer) const noexcept { return layers_[static_cast<size_t>(layer)]; }

  // File ranges of (layer, expert). Errors: invalid_argument (layer or expert
  // out of range, or a layer without routed experts).
  Result<ExpertRanges> ranges(int32_t layer, int32_t expert) const;

 private:
  struct LayerBases {
    uint64_t gate = 0, up = 0, down = 0;  // per_tensor: absolute offsets of the three tensors
    uint64_t packed = 0;                  // contiguous: absolute offset of the packed tensor
  };
  ExpertLayoutKind kind_ = ExpertLayoutKind::per_tensor;
  int32_t n_expert_ = 0;
  int32_t n_moe_layers_ = 0;
  std::vector<LayerExpertInfo> layers_;
  std::vector<LayerBases> bases_;
};

}  // namespace les
