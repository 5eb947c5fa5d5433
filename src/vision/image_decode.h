// Image files to RGB8: PNG, JPEG (baseline and progressive) and binary
// PPM/PGM (P6/P5), decoded by stb_image (Debian's libstb-dev; the decoder
// llama.cpp's mtmd uses too, so LES sees the same pixels). Every image comes
// out as 3-channel RGB8 (grey is replicated, alpha is dropped), as
// mtmd_helper_bitmap_init_from_file does.
//
// Refused, each with a Status naming the problem: empty input, data that is
// none of the three formats, a header with a zero or negative size, an image
// above the pixel bound (checked from the header before anything is decoded,
// so a hostile header costs no memory), corrupt or truncated pixel data.
//
// Thread-safety: thread-safe (stb_image's failure reason is thread-local; LES
// never sets stb_image's global flags).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "util/status.h"
#include "vision/rgb_image.h"

namespace les::vision {

// Bounds on what decode_image / decode_image_file accept.
struct ImageDecodeLimits {
  int64_t max_pixels = kDefaultMaxImagePixels;  // width * height above this is refused
  int64_t max_file_bytes = int64_t{1} << 30;    // decode_image_file: larger files are refused (1 GiB)
};

// Decodes an encoded image held in memory. Errors: invalid_argument (empty
// input; more than 2^31-1 bytes; width * height above limits.max_pixels),
// format (not PNG/JPEG/PPM/PGM, zero size, corrupt or truncated data: the
// message carries stb_image's reason).
Result<RgbImage> decode_image(std::span<const uint8_t> bytes, const ImageDecodeLimits& limits = {});

// Reads the file at `path` and decodes it as decode_image does. Errors: io
// (cannot open or read; the message names the path), invalid_argument (the
// file is larger than limits.max_file_bytes), and those of decode_image with
// the path in the message.
Result<RgbImage> decode_image_file(const std::string& path, const ImageDecodeLimits& limits = {});

}  // namespace les::vision
