// See vision_encoder.h.
#include "vision/vision_encoder.h"

#include <string>

#include "core/model/weight_matmul.h"
#include "kernels/kernels.h"
#include "vision/vision_projector.h"
#include "vision/vit_merger.h"

namespace les::vision {

VisionEncoder::VisionEncoder(const MmprojModel& model, kernels::ThreadPool* pool) : model_(model) {
  compute_.table = &kernels::default_kernel_table();
  compute_.mm.pool = pool;
}

Status VisionEncoder::embed_patches(const float* image, int64_t width, int64_t height, std::vector<float>& x) {
  const MmprojHparams& hp = model_.hparams();
  const MmprojWeights& w = model_.weights();
  const int64_t p = hp.patch_size, px = width / p, py = height / p, n = px * py, E = hp.n_embd;
  const int64_t K = 3 * p * p;
  // im2col: row t = patch (i, j) holds pixel (c, i p + ky, j p + kx) at c p^2 + ky p + kx,
  // the element order of the kernel's ne [p, p, 3] (kx fastest).
  cols_.resize(static_cast<size_t>(n * K));
  for (int64_t i = 0; i < py; ++i)
    for (int64_t j = 0; j < px; ++j) {
      float* row = cols_.data() + (i * px + j) * K;
      for (int64_t ch = 0; ch < 3; ++ch)
        for (int64_t ky = 0; ky < p; ++ky) {
          const float* src = image + (ch * height + i * p + ky) * width + j * p;
          for (int64_t kx = 0; kx < p; ++kx) row[(ch * p + ky) * p + kx] = src[kx];
        }
    }
  x.resize(static_cast<size_t>(n * E));
  LES_RETURN_IF_ERROR(linear(w.patch_w, w.patch_b, cols_.data(), n, x.data(), compute_));
  // Position embedding by bucket (README step 2; the floor of a double as llama.cpp).
  std::vector<float> pos(static_cast<size_t>(E));
  for (int64_t i = 0; i < py; ++i) {
    const int64_t bi = static_cast<int64_t>(kPosBuckets * static_cast<double>(i) / static_cast<double>(py));
    for (int64_t j = 0; j < px; ++j) {
      const int64_t bj = static_cast<int64_t>(kPosBuckets * static_cast<double>(j) / static_cast<double>(px));
      LES_RETURN_IF_ERROR(dequantize_row(w.pos_embd, bi * kPosBuckets + bj, pos.data()));
      add_inplace(x.data() + (i * px + j) * E, pos.data(), E);
    }
  }
  return Status();
}

Status VisionEncoder::encode(const float* image, int64_t width, int64_t height, std::vector<float>& out,
                             const VisionTapFn& tap) {
  const MmprojHparams& hp = model_.hparams();
  const MmprojWeights& w = model_.weights();
  const int64_t align = hp.patch_size * hp.n_merge;
  if (image == nullptr) return invalid_argument_error("vision encoder: image is null");
  if (width <= 0 || height <= 0 || width % align != 0 || height % align != 0)
    return invalid_argument_error("vision encoder: image chunk " + std::to_string(width) + "x" +
                                  std::to_string(height) + " is not a positive multiple of " + std::to_string(align) +
                                  " pixels on each side");
  const int64_t px = width / hp.patch_size, py = height / hp.patch_size;
  if (px * py > kMaxPatches)
    return invalid_argument_error("vision encoder: image chunk " + std::to_string(width) + "x" +
                                  std::to_string(height) + " has " + std::to_string(px * py) +
                                  " patches, more than " + std::to_string(kMaxPatches));
  const int64_t E = hp.n_embd;
  auto emit = [&](std::string_view stage, const float* d, int64_t n, int64_t wd) {
    if (tap) tap(stage, d, n, wd);
  };

  LES_RETURN_IF_ERROR(embed_patches(image, width, height, x_));
  int64_t n = px * py;
  emit("pos_embed", x_.data(), n, E);
  if (w.pre_ln_w.present()) layer_norm_rows(x_.data(), n, E, w.pre_ln_w, w.pre_ln_b, hp.eps, x_.data(), compute_);

  for (int64_t il = 0; il <= hp.insert_layer_id; ++il) {
    LES_RETURN_IF_ERROR(vit_block_forward(w.layers[static_cast<size_t>(il)], hp, x_.data(), n, compute_, ws_));
    emit("layer_out-" + std::to_string(il), x_.data(), n, E);
  }
  LES_RETURN_IF_ERROR(vit_merger_window_attention(w.merger, hp, x_.data(), py, px, compute_, ws_));
  emit("vit_merger_attn_residual", x_.data(), n, E);
  y_.resize(static_cast<size_t>((n / 4) * E));
  LES_RETURN_IF_ERROR(vit_merger_downsample(w.merger, hp, x_.data(), py, px, y_.data(), compute_, ws_));
  n /= 4;
  emit("vit_merger_ds_out", y_.data(), n, E);
  for (int64_t il = hp.insert_layer_id + 1; il < hp.n_layer; ++il) {
    LES_RETURN_IF_ERROR(vit_block_forward(w.layers[static_cast<size_t>(il)], hp, y_.data(), n, compute_, ws_));
    emit("layer_out-" + std::to_string(il), y_.data(), n, E);
  }
  if (w.post_ln_w.present()) {
    layer_norm_rows(y_.data(), n, E, w.post_ln_w, w.post_ln_b, hp.eps, y_.data(), compute_);
    emit("post_ln", y_.data(), n, E);
  }
  out.resize(static_cast<size_t>((n / 4) * hp.n_embd_out));
  LES_RETURN_IF_ERROR(vision_projector_forward(
      w.proj, hp, y_.data(), py / 2, px / 2, out.data(), compute_, ws_,
      [&](const float* d, int64_t rows, int64_t wd) { emit("merger_normed", d, rows, wd); }));
  emit("merger_out", out.data(), n / 4, hp.n_embd_out);
  return Status();
}

}  // namespace les::vision
