// VisionEncoder: one image chunk through the MiniCPM-V 4.6 vision encoder,
// from normalised pixels to the embeddings the text model takes in place of
// image tokens. The graph is docs/model-graphs.md section 6,
// "Graph", steps 1-7:
//   1. patch embedding: conv p x p, stride p (im2col + matmul) + bias, tokens
//      in row-major patch order (px = W/p columns, py = H/p rows);
//   2. + position_embd[floor(70 i / py) * 70 + floor(70 j / px)];
//   (pre_ln when the file has one;)
//   3. ViT blocks 0..insert_layer_id (vit_block.h);
//   4-5. ViT merger: window attention, then 2x2 downsample (vit_merger.h);
//   6. blocks insert_layer_id+1..n_layer-1 on (px/2) x (py/2) tokens, post_ln;
//   7. final 2x2 merger + projector (vision_projector.h):
//      (px/4) * (py/4) tokens of n_embd_out floats.
//
// Precision: weights as stored (F16 in the fixture); matmul activations are
// rounded to the weight's vec_dot_type (F16 for F16 weights), as ggml's CPU
// backend does; everything else (norms, attention, GELU) is F32.
//
// Thread-safety: an encoder holds scratch buffers: one encode() at a time per
// encoder (several encoders may share one model). The pool must not be used by
// anyone else during encode().
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "kernels/thread_pool.h"
#include "util/status.h"
#include "vision/mmproj_model.h"
#include "vision/vit_block.h"
#include "vision/vit_ops.h"

namespace les::vision {

// Observer of intermediate tensors (tests and debugging; internal C++ only).
// Called with the stage name of llama.cpp's eval callback ("pos_embed",
// "layer_out-<il>", "vit_merger_attn_residual", "vit_merger_ds_out",
// "post_ln", "merger_normed", "merger_out") and the tensor as n_tokens rows of
// `width` floats; the data is valid only during the call.
using VisionTapFn = std::function<void(std::string_view stage, const float* data, int64_t n_tokens, int64_t width)>;

class VisionEncoder {
 public:
  // `model` and `pool` are borrowed and must outlive the encoder; pool may be
  // null (everything on the calling thread).
  VisionEncoder(const MmprojModel& model, kernels::ThreadPool* pool);

  // Encodes one chunk. image: planar [3][height][width] floats, already
  // normalised ((u8/255 - mean) / std). width and height: multiples of
  // patch_size * n_merge (56), with at most kMaxPatches patches.
  // out: resized to n_output_tokens(width, height) x n_embd_out floats, token-major.
  // Errors: invalid_argument (null image, a side not a positive multiple of
  // 56, too many patches), unsupported (weight type without a kernel). On
  // error `out` is unspecified.
  Status encode(const float* image, int64_t width, int64_t height, std::vector<float>& out,
                const VisionTapFn& tap = {});

  // Most patches (width/p * height/p) one chunk may have: 2^16 (a 3584 x 3584
  // chunk at p = 14; real chunks are 448 x 448 = 1024 patches).
  static constexpr int64_t kMaxPatches = int64_t{1} << 16;

 private:
  // Steps 1-2: x (py * px tokens x E) from the image.
  Status embed_patches(const float* image, int64_t width, int64_t height, std::vector<float>& x);

  const MmprojModel& model_;
  VitCompute compute_;
  VitWorkspace ws_;
  std::vector<float> x_, y_, cols_;
};

}  // namespace les::vision
