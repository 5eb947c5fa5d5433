#include "vision/image_slicing.h"

#include <cmath>
#include <limits>
#include <string>

namespace les::vision {
namespace {

struct Size {
  int64_t w = 0, h = 0;
};

// llama.cpp's get_best_resize: an area of about S^2 at the aspect ratio of
// `s` (always when upscaling is allowed, else only for a larger image), each
// side then aligned with ensure_divide. r, S/sqrt(r) and h*r are float.
Size best_resize(Size s, int32_t S, int32_t align, bool allow_upscale) {
  int64_t w = s.w, h = s.h;
  if (w * h > int64_t{S} * S || allow_upscale) {
    const float r = static_cast<float>(w) / static_cast<float>(h);
    h = static_cast<int64_t>(static_cast<float>(S) / std::sqrt(r));
    w = static_cast<int64_t>(static_cast<float>(h) * r);
  }
  return {ensure_divide(w, align), ensure_divide(h, align)};
}

// llama.cpp's get_best_grid: the (cols, rows) whose log aspect is closest to
// log_ratio, over the divisor grids of the slice counts multiple-1..multiple+1
// (1 and above kMaxSlices left out), the first one winning a tie.
Size best_grid(int32_t multiple, float log_ratio) {
  Size best{1, 1};
  float min_error = std::numeric_limits<float>::infinity();
  for (int32_t n : {multiple - 1, multiple, multiple + 1}) {
    if (n == 1 || n > kMaxSlices) continue;
    for (int32_t m = 1; m <= n; ++m) {
      if (n % m != 0) continue;
      const float error = static_cast<float>(
          std::abs(static_cast<double>(log_ratio) - std::log(1.0 * m / (n / m))));
      if (error < min_error) {
        best = {m, n / m};
        min_error = error;
      }
    }
  }
  return best;
}

}  // namespace

Status check_slice_geometry(const SliceGeometry& g) {
  if (g.patch_size <= 0 || g.patch_size > 1024)
    return invalid_argument_error("vision: patch_size " + std::to_string(g.patch_size) + " is outside [1, 1024]");
  if (g.n_merge <= 0 || g.n_merge > 64)
    return invalid_argument_error("vision: n_merge (projector scale_factor) " + std::to_string(g.n_merge) +
                                  " is outside [1, 64]");
  const int32_t align = g.patch_size * g.n_merge;
  if (g.image_size <= 0 || g.image_size > 16384 || g.image_size % align != 0)
    return invalid_argument_error("vision: image_size " + std::to_string(g.image_size) +
                                  " is not a positive multiple of patch_size * n_merge = " + std::to_string(align) +
                                  " up to 16384");
  return Status();
}

int64_t ensure_divide(int64_t length, int32_t align) {
  const float r = std::round(static_cast<float>(length) / static_cast<float>(align));
  return std::max(static_cast<int64_t>(r * static_cast<float>(align)), int64_t{align});
}

Result<SlicePlan> plan_slices(int32_t width, int32_t height, const SliceGeometry& g) {
  LES_RETURN_IF_ERROR(check_slice_geometry(g));
  if (width <= 0 || height <= 0)
    return invalid_argument_error("vision: zero-size image (" + std::to_string(width) + " x " +
                                  std::to_string(height) + " pixels)");
  const int32_t S = g.image_size;
  const int32_t align = g.patch_size * g.n_merge;
  SlicePlan plan;
  if (width <= S && height <= S) {
    plan.overview_width = plan.overview_height = S;
    return plan;
  }
  const Size ov = best_resize({width, height}, S, align, /*allow_upscale=*/false);

  const float log_ratio =
      static_cast<float>(std::log(static_cast<double>(static_cast<float>(width) / static_cast<float>(height))));
  const float ratio = static_cast<float>(width) * static_cast<float>(height) / static_cast<float>(S * S);
  const int32_t multiple = static_cast<int32_t>(std::fmin(std::ceil(ratio), kMaxSlices));
  const Size grid = best_grid(multiple, log_ratio);

  // The cell of the image split by the grid, rescaled to about S^2 (upscaling allowed).
  const Size cell0{ensure_divide(width, static_cast<int32_t>(grid.w)) / grid.w,
                   ensure_divide(height, static_cast<int32_t>(grid.h)) / grid.h};
  const Size cell = best_resize(cell0, S, align, /*allow_upscale=*/true);
  const int64_t rw = cell.w * grid.w, rh = cell.h * grid.h;
  if (rw > std::numeric_limits<int32_t>::max() || rh > std::numeric_limits<int32_t>::max())
    return invalid_argument_error("vision: a " + std::to_string(width) + " x " + std::to_string(height) +
                                  " image is too elongated to slice (refined size " + std::to_string(rw) + " x " +
                                  std::to_string(rh) + ")");
  plan.overview_width = static_cast<int32_t>(ov.w);
  plan.overview_height = static_cast<int32_t>(ov.h);
  plan.grid_cols = static_cast<int32_t>(grid.w);
  plan.grid_rows = static_cast<int32_t>(grid.h);
  plan.refined_width = static_cast<int32_t>(rw);
  plan.refined_height = static_cast<int32_t>(rh);
  for (int32_t r = 0; r < plan.grid_rows; ++r)
    for (int32_t c = 0; c < plan.grid_cols; ++c)
      plan.slices.push_back({r, c, c * static_cast<int32_t>(cell.w), r * static_cast<int32_t>(cell.h),
                             static_cast<int32_t>(cell.w), static_cast<int32_t>(cell.h)});
  return plan;
}

}  // namespace les::vision
