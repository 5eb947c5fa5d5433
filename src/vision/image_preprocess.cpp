#include "vision/image_preprocess.h"

#include <cmath>
#include <new>
#include <string>

#include "vision/image_resize.h"

namespace les::vision {
namespace {

// u8 -> [3][H][W] floats: (u8 / 255 - mean) / std, in float as llama.cpp's
// clip_image_f32::from_u8 then normalize.
std::vector<float> normalise(const RgbImage& img, const PreprocessParams& p) {
  const size_t n = static_cast<size_t>(img.n_pixels());
  std::vector<float> out(n * 3);
  for (int c = 0; c < 3; ++c) {
    float* plane = out.data() + static_cast<size_t>(c) * n;
    for (size_t i = 0; i < n; ++i)
      plane[i] = (static_cast<float>(img.pixels[i * 3 + static_cast<size_t>(c)]) / 255.0f - p.mean[c]) / p.std[c];
  }
  return out;
}

ImageChunk make_chunk(const RgbImage& img, ChunkRole role, int32_t row, int32_t col, const PreprocessParams& p) {
  ImageChunk c;
  c.role = role;
  c.row = row;
  c.col = col;
  c.width = img.width;
  c.height = img.height;
  c.n_tokens = chunk_tokens(img.width, img.height, p.geometry.patch_size);
  c.pixels = normalise(img, p);
  return c;
}

Status check_params(const RgbImage& image, const PreprocessParams& p) {
  LES_RETURN_IF_ERROR(check_slice_geometry(p.geometry));
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(p.mean[c]) || !std::isfinite(p.std[c]) || p.std[c] == 0.0f)
      return invalid_argument_error("vision: image_mean[" + std::to_string(c) + "] = " + std::to_string(p.mean[c]) +
                                    ", image_std = " + std::to_string(p.std[c]) +
                                    ": both must be finite and the std non-zero");
  }
  if (image.width <= 0 || image.height <= 0)
    return invalid_argument_error("vision: zero-size image (" + std::to_string(image.width) + " x " +
                                  std::to_string(image.height) + " pixels)");
  if (image.pixels.size() != static_cast<size_t>(image.n_pixels()) * 3)
    return invalid_argument_error("vision: a " + std::to_string(image.width) + " x " + std::to_string(image.height) +
                                  " image needs " + std::to_string(image.n_pixels() * 3) + " bytes, it holds " +
                                  std::to_string(image.pixels.size()));
  return Status();
}

}  // namespace

int32_t chunk_tokens(int32_t width, int32_t height, int32_t patch_size) noexcept {
  return static_cast<int32_t>(static_cast<int64_t>(width / patch_size) * (height / patch_size) / 16);
}

int64_t PreprocessedImage::n_tokens() const noexcept {
  int64_t n = 0;
  for (const ImageChunk& c : chunks) n += c.n_tokens;
  return n;
}

Result<PreprocessedImage> preprocess_image(const RgbImage& image, const PreprocessParams& p) {
  LES_RETURN_IF_ERROR(check_params(image, p));
  LES_ASSIGN_OR_RETURN(const SlicePlan plan, plan_slices(image.width, image.height, p.geometry));
  const int32_t S = p.geometry.image_size, patch = p.geometry.patch_size;
  const int64_t limit =
      p.max_image_tokens > 0 ? p.max_image_tokens : 4 * int64_t{kMaxSlices + 1} * chunk_tokens(S, S, patch);
  int64_t planned = chunk_tokens(plan.overview_width, plan.overview_height, patch);
  for (const SliceRect& s : plan.slices) planned += chunk_tokens(s.width, s.height, patch);
  if (planned > limit)
    return invalid_argument_error("vision: a " + std::to_string(image.width) + " x " + std::to_string(image.height) +
                                  " image would give " + std::to_string(planned) + " image tokens (overview " +
                                  std::to_string(plan.overview_width) + " x " + std::to_string(plan.overview_height) +
                                  ", refined " + std::to_string(plan.refined_width) + " x " +
                                  std::to_string(plan.refined_height) + "), above the limit of " +
                                  std::to_string(limit) + ": its aspect ratio is too extreme");
  try {
    PreprocessedImage out;
    out.grid_cols = plan.grid_cols;
    out.grid_rows = plan.grid_rows;
    const RgbImage ov =
        resize_image(image, plan.overview_width, plan.overview_height, ResizeAlgo::bilinear, ResizePad::none);
    out.chunks.push_back(make_chunk(ov, ChunkRole::overview, 0, 0, p));
    if (!plan.slices.empty()) {
      const RgbImage refined = resize_image(image, plan.refined_width, plan.refined_height, ResizeAlgo::bicubic,
                                            ResizePad::ceil, {0, 0, 0});
      for (const SliceRect& s : plan.slices)
        out.chunks.push_back(make_chunk(crop_image(refined, s.x, s.y, s.width, s.height), ChunkRole::slice, s.row,
                                        s.col, p));
    }
    return out;
  } catch (const std::bad_alloc&) {
    return out_of_memory_error("vision: out of memory preprocessing a " + std::to_string(image.width) + " x " +
                               std::to_string(image.height) + " image");
  }
}

}  // namespace les::vision
