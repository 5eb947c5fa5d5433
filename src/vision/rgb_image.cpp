#include "vision/rgb_image.h"

#include <string>

namespace les::vision {

Status check_image_size(int64_t width, int64_t height, int64_t max_pixels, const char* what) {
  if (width <= 0 || height <= 0)
    return invalid_argument_error(std::string(what) + ": zero-size image (" + std::to_string(width) + " x " +
                                  std::to_string(height) + " pixels)");
  // Each side is checked first, so the product cannot overflow.
  if (width > max_pixels || height > max_pixels || width * height > max_pixels)
    return invalid_argument_error(std::string(what) + ": " + std::to_string(width) + " x " + std::to_string(height) +
                                  " pixels is above the limit of " + std::to_string(max_pixels) + " pixels");
  return Status();
}

Result<RgbImage> rgb_image_from_pixels(std::span<const uint8_t> pixels, int32_t width, int32_t height,
                                       int64_t max_pixels) {
  LES_RETURN_IF_ERROR(check_image_size(width, height, max_pixels, "RGB8 image"));
  const uint64_t want = static_cast<uint64_t>(width) * static_cast<uint64_t>(height) * 3;
  if (pixels.size() != want)
    return invalid_argument_error("RGB8 image: " + std::to_string(width) + " x " + std::to_string(height) +
                                  " needs " + std::to_string(want) + " bytes, got " + std::to_string(pixels.size()));
  RgbImage img;
  img.width = width;
  img.height = height;
  img.pixels.assign(pixels.begin(), pixels.end());
  return img;
}

}  // namespace les::vision
