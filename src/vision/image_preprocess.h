// MiniCPM-V (minicpmv4_6) image preprocessing: an RGB8 image to the encoder
// inputs of its chunks (the overview, then the slices), exactly as llama.cpp's
// mtmd_image_preprocessor_llava_uhd does (tools/mtmd/mtmd-image.cpp at
// 81ff7abe; docs/model-graphs.md section 6, "Preprocessing and
// slicing"):
// * the plan of image_slicing.h gives the sizes;
// * overview: the image stretched to the overview size with llama.cpp's
//   bilinear resize (an exact copy when the size is unchanged);
// * with slices: the image resized to the refined size with llama.cpp's
//   bicubic, aspect kept (PAD ceil), centred on black; the slices are crops
//   of it in row-major order;
// * each chunk normalised per channel, f = (u8 / 255 - mean[c]) / std[c]
//   (float steps as llama.cpp's clip_image_f32), laid out planar [3][H][W].
//
// Thread-safety: pure function (thread-safe).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "util/status.h"
#include "vision/image_slicing.h"
#include "vision/rgb_image.h"

namespace les::vision {

// What preprocess_image needs from the mmproj, plus a safety bound.
struct PreprocessParams {
  SliceGeometry geometry;                         // from the mmproj (image_slicing.h)
  std::array<float, 3> mean = {0.5f, 0.5f, 0.5f}; // clip.vision.image_mean (R, G, B)
  std::array<float, 3> std = {0.5f, 0.5f, 0.5f};  // clip.vision.image_std; each finite and non-zero
  // Bound on the image tokens of all chunks together: an image so elongated
  // that its plan needs more is refused before any pixel is resized. 0 means
  // the default, 4 times the tokens of (kMaxSlices + 1) full S x S chunks.
  int64_t max_image_tokens = 0;
};

// What a chunk shows: the whole image (overview) or one cell of the grid (slice).
enum class ChunkRole { overview, slice };

// One encoder input: the overview or one slice.
struct ImageChunk {
  ChunkRole role = ChunkRole::overview;
  int32_t row = 0, col = 0;        // grid cell of a slice; 0, 0 for the overview
  int32_t width = 0, height = 0;   // pixels; multiples of patch_size * n_merge
  // Embeddings the encoder makes of this chunk: (width / patch) * (height /
  // patch) / 16 (minicpmv4_6 merges 2x2 twice; llama.cpp's clip_n_output_tokens).
  int32_t n_tokens = 0;
  std::vector<float> pixels;       // planar [3][height][width], normalised
};

// The encoder inputs of one image, in the order their embeddings enter the prompt.
struct PreprocessedImage {
  int32_t grid_cols = 0, grid_rows = 0;  // the slice grid; 0 x 0 without slices
  std::vector<ImageChunk> chunks;        // the overview first, then the slices row-major
  // Sum of the chunks' n_tokens.
  int64_t n_tokens() const noexcept;
};

// Preprocesses `image`. Errors: invalid_argument (empty image or pixels not
// width * height * 3 bytes; bad geometry, see check_slice_geometry; a mean or
// std that is not finite, or a zero std; a plan above max_image_tokens),
// out_of_memory.
Result<PreprocessedImage> preprocess_image(const RgbImage& image, const PreprocessParams& p);

// The image tokens of one chunk of width x height pixels (see ImageChunk).
int32_t chunk_tokens(int32_t width, int32_t height, int32_t patch_size) noexcept;

}  // namespace les::vision
