// An 8-bit RGB image in memory: the form every image takes between decoding
// (image_decode.h) and preprocessing (image_preprocess.h).
//
// Layout: row-major, top row first, 3 bytes per pixel in R, G, B order, no
// row padding: pixel (x, y) channel c is pixels[(y * width + x) * 3 + c]. This
// is stb_image's layout with 3 requested components, and llama.cpp's
// clip_image_u8.
//
// Thread-safety: a plain value type (thread-compatible).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "util/status.h"

namespace les::vision {

struct RgbImage {
  int32_t width = 0;            // pixels, > 0 in any image a function here returns
  int32_t height = 0;           // pixels, > 0 likewise
  std::vector<uint8_t> pixels;  // width * height * 3 bytes

  // Number of pixels (width * height) as a 64-bit count.
  int64_t n_pixels() const noexcept { return static_cast<int64_t>(width) * height; }
  // Pointer to the 3 bytes of pixel (x, y). Precondition: 0 <= x < width, 0 <= y < height.
  const uint8_t* at(int32_t x, int32_t y) const noexcept {
    return pixels.data() + (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
  }
  uint8_t* at(int32_t x, int32_t y) noexcept {
    return pixels.data() + (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
  }
};

// Default bound on the pixel count of an image LES accepts: 64 Mi pixels
// (8192 x 8192; 192 MiB as RGB8). Far above what the encoder needs (it
// resizes to at most 9 slices of image_size^2 plus an overview), low enough
// that a hostile header cannot make LES allocate gigabytes.
inline constexpr int64_t kDefaultMaxImagePixels = int64_t{1} << 26;

// An RgbImage that owns a copy of caller-given RGB8 bytes (width * height * 3,
// layout above; the C API's "RGB8 bytes" input). Errors: invalid_argument
// (width or height <= 0: "zero-size image"; more than max_pixels pixels;
// pixels.size() != width * height * 3). Thread-safe.
Result<RgbImage> rgb_image_from_pixels(std::span<const uint8_t> pixels, int32_t width, int32_t height,
                                       int64_t max_pixels = kDefaultMaxImagePixels);

// Checks width x height against the bounds every image here obeys: invalid_argument
// when a side is <= 0 ("zero-size image") or the pixel count exceeds max_pixels.
// `what` names the image in the message. Thread-safe.
Status check_image_size(int64_t width, int64_t height, int64_t max_pixels, const char* what);

}  // namespace les::vision
