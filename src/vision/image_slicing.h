// The llava-uhd slicing plan of MiniCPM-V (projector minicpmv4_6): from an
// image's size alone, the overview size, the slice grid, the refined size and
// the slice rectangles, exactly as llama.cpp's
// mtmd_image_preprocessor_llava_uhd::get_slice_instructions computes them
// (tools/mtmd/mtmd-image.cpp at 81ff7abe; restated in
// docs/model-graphs.md section 6, "Preprocessing and slicing").
//
// With S = image_size and A = patch_size * n_merge, ensure_divide(L, A) =
// max(round(L / A) * A, A):
// * W <= S and H <= S: no slices; the overview is S x S.
// * Otherwise the overview is best_resize(W x H) without upscaling, the grid
//   minimises |log(W/H) - log(cols/rows)| over the divisor grids of the slice
//   counts {m-1, m, m+1} (m = min(ceil(W*H/S^2), 9); 1 and > 9 left out),
//   and the refined size is the grid times best_resize(cell) with upscaling.
// The float/double steps of llama.cpp are kept, so borderline roundings and
// ties come out the same.
//
// Thread-safety: pure functions (thread-safe).
#pragma once

#include <cstdint>
#include <vector>

#include "util/status.h"

namespace les::vision {

// The geometry parameters, from the mmproj: clip.vision.image_size,
// clip.vision.patch_size and clip.vision.projector.scale_factor (n_merge).
struct SliceGeometry {
  int32_t image_size = 448;  // S: slice and overview size (pixels); tiny fixture: 224
  int32_t patch_size = 14;   // ViT patch side (pixels)
  int32_t n_merge = 4;       // sizes are aligned to patch_size * n_merge pixels
};

// llama.cpp's slice-count cap for MiniCPM-V.
inline constexpr int32_t kMaxSlices = 9;

// One slice: a rectangle of the refined image, at grid cell (row, col).
struct SliceRect {
  int32_t row = 0, col = 0;
  int32_t x = 0, y = 0;           // top-left pixel in the refined image
  int32_t width = 0, height = 0;  // pixels (every slice of a plan has the same size)
};

// The sizes of an image's chunks (pixels): overview, grid, refined image, slices.
struct SlicePlan {
  int32_t overview_width = 0, overview_height = 0;
  int32_t grid_cols = 0, grid_rows = 0;              // 0 x 0 without slices
  int32_t refined_width = 0, refined_height = 0;     // 0 x 0 without slices
  std::vector<SliceRect> slices;                     // row-major (y outer, x inner); empty without slices
};

// Checks the geometry: invalid_argument unless 0 < patch_size <= 1024,
// 0 < n_merge <= 64, and image_size a positive multiple of patch_size *
// n_merge up to 16384 (so every chunk holds whole merged tokens).
Status check_slice_geometry(const SliceGeometry& g);

// llama.cpp's ensure_divide: max(round(length / align) * align, align), the
// division and rounding in float (64-bit result: no overflow for any int32
// length). Precondition: align > 0, 0 <= length < 2^40.
int64_t ensure_divide(int64_t length, int32_t align);

// The plan for a width x height image. Errors: invalid_argument (a side <= 0,
// a bad geometry, see check_slice_geometry). Sizes are computed in 64-bit
// before narrowing; any image within kDefaultMaxImagePixels plans without
// overflow (image_preprocess.h bounds the resulting token count).
Result<SlicePlan> plan_slices(int32_t width, int32_t height, const SliceGeometry& g);

}  // namespace les::vision
