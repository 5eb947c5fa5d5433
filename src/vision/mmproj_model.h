// MmprojModel: the vision encoder of a MiniCPM-V 4.6 multimodal model, loaded
// from an "mmproj" GGUF (llama.cpp's clip format, projector `minicpmv4_6`).
//
// Keys and tensors: docs/model-graphs.md section 6 ("mmproj keys and
// tensors"), which follows llama.cpp's clip loader at 81ff7abe. Shapes
// are ggml ne (ne[0] contiguous); a 2-D weight {cols, rows} computes
// y = W x (core/model/weight_view.h).
//
// Validation at load (every failure a Status naming the key or tensor):
//   general.architecture == "clip", clip.has_vision_encoder == true,
//   clip.projector_type == "minicpmv4_6" (any other type: unsupported, named);
//   the hyper-parameters below (required unless a default is given), each
//   tensor's shape against them, element types (F32 vectors, matrices of a
//   type with a matmul kernel), and the output width (mm.down rows) against
//   the text model's n_embd when one is given. A file whose blocks name the FFN
//   matrices the other way round (ffn_down.weight of shape [E, n_ff], as some
//   older conversions write) is read with the two swapped, as llama.cpp does.
//
// The weights are views into the file's read-only mapping: they stay resident
// (page cache) while the model lives and go with it.
//
// Thread-safety: immutable after load(); any number of encoders may read one
// model at once.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/weight_view.h"
#include "util/status.h"

namespace les::gguf {
class GgufFile;
}

namespace les::vision {

// The position-embedding grid of SigLIP-style encoders: 70 x 70 buckets
// (llama.cpp hard-codes 70; position_embd must have 70 * 70 rows).
inline constexpr int kPosBuckets = 70;

// Hyper-parameters of the encoder (clip.vision.* keys, README "mmproj keys").
struct MmprojHparams {
  int64_t image_size = 0;      // clip.vision.image_size: slice / overview side in pixels
  int64_t patch_size = 0;      // clip.vision.patch_size (14)
  int64_t n_embd = 0;          // clip.vision.embedding_length: ViT hidden width E
  int64_t n_ff = 0;            // clip.vision.feed_forward_length: ViT FFN width
  int64_t n_layer = 0;         // clip.vision.block_count
  int64_t n_head = 0;          // clip.vision.attention.head_count (head dim E / n_head)
  int64_t projection_dim = 0;  // clip.vision.projection_dim (required, unused by the graph)
  float eps = 1e-6f;           // clip.vision.attention.layer_norm_epsilon (every LayerNorm)
  std::array<float, 3> image_mean{};  // clip.vision.image_mean (RGB)
  std::array<float, 3> image_std{};   // clip.vision.image_std (RGB)
  int64_t insert_layer_id = 0;  // clip.vision.wa_layer_indexes[0]: the ViT merger runs after this block (default 0)
  int64_t n_merge = 4;          // clip.vision.projector.scale_factor (default 4): input sides are multiples of patch_size * n_merge
  // Derived from the tensors:
  int64_t n_ff_ds = 0;     // v.vit_merger.ds_ffn_up rows (hidden width of the downsample MLP)
  int64_t n_ff_mm = 0;     // mm.up rows (hidden width of the final projector)
  int64_t n_embd_out = 0;  // mm.down rows: the embedding width handed to the text model

  int64_t head_dim() const noexcept { return n_embd / n_head; }
};

// One pre-LN ViT block (v.blk.N.*). Biases and layer scales are optional
// (absent: WeightView::present() == false).
struct VitLayerWeights {
  WeightView ln1_w, ln1_b;          // [E] F32
  WeightView q_w, k_w, v_w, o_w;    // [E, E] matrices
  WeightView q_b, k_b, v_b, o_b;    // [E] F32, optional
  WeightView ls1, ls2;              // [E] F32 layer scales, optional
  WeightView ln2_w, ln2_b;          // [E] F32
  WeightView up_w, down_w;          // [E, n_ff], [n_ff, E]
  WeightView up_b, down_b;          // [n_ff], [E] F32, optional
};

// The ViT merger after block insert_layer_id (v.vit_merger.*): window
// attention, then the 2x2 downsample MLP.
struct VitMergerWeights {
  WeightView ln1_w, ln1_b;            // [E]
  WeightView q_w, k_w, v_w, o_w;      // [E, E]
  WeightView q_b, k_b, v_b, o_b;      // [E], optional
  WeightView ds_ln_w, ds_ln_b;        // [4E]
  WeightView ds_up_w, ds_up_b;        // [4E, n_ff_ds], [n_ff_ds] (bias optional)
  WeightView ds_down_w, ds_down_b;    // [n_ff_ds, E], [E] (bias optional)
};

// The final merger / projector (mm.*): LayerNorm over 4E, up, erf-GELU, down.
struct ProjectorWeights {
  WeightView norm_w, norm_b;  // mm.input_norm [4E] (bias optional)
  WeightView up_w, up_b;      // [4E, n_ff_mm], [n_ff_mm] (bias optional)
  WeightView down_w, down_b;  // [n_ff_mm, n_embd_out], [n_embd_out] (bias optional)
};

// All encoder weights.
struct MmprojWeights {
  WeightView patch_w;              // v.patch_embd.weight [p, p, 3, E] viewed as a matrix {3 p p, E}
  WeightView patch_b;              // [E] F32, optional
  WeightView pos_embd;             // v.position_embd.weight [E, 70 * 70] (any dequantisable type)
  WeightView pre_ln_w, pre_ln_b;   // [E], optional (absent in MiniCPM-V 4.6)
  std::vector<VitLayerWeights> layers;
  VitMergerWeights merger;
  WeightView post_ln_w, post_ln_b;  // [E], optional
  ProjectorWeights proj;
};

class MmprojModel {
 public:
  // Opens and validates `path`. `text_n_embd` > 0: the text model's embedding
  // width, which must equal mm.down's rows (else invalid_argument naming both
  // widths); 0 skips that check. Errors: io (cannot open), format (not a GGUF,
  // truncated, missing key or tensor, wrong shape; the message names it),
  // unsupported (another projector type, quick-GELU/SiLU FFN, a tensor type
  // without a kernel).
  static Result<std::unique_ptr<MmprojModel>> load(const std::string& path, int64_t text_n_embd = 0);

  ~MmprojModel();
  MmprojModel(const MmprojModel&) = delete;
  MmprojModel& operator=(const MmprojModel&) = delete;

  const MmprojHparams& hparams() const noexcept { return hp_; }
  const MmprojWeights& weights() const noexcept { return w_; }
  const std::string& path() const noexcept;

  // Image tokens one chunk of width x height pixels gives:
  // (width / patch) * (height / patch) / n_merge^2 (README "Slices").
  int64_t n_output_tokens(int64_t width, int64_t height) const noexcept;

 private:
  MmprojModel() = default;
  Status read_hparams();
  Status read_weights();

  std::unique_ptr<gguf::GgufFile> file_;
  MmprojHparams hp_;
  MmprojWeights w_;
};

}  // namespace les::vision
