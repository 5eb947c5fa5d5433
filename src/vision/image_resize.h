// Resizing, padding and cropping of RGB8 images, bit-exact with llama.cpp's
// mtmd image tools (tools/mtmd/mtmd-image.cpp at 81ff7abe: img_tool::resize,
// resize_bilinear, resize_bicubic, crop), so the encoder sees the pixels the
// llama.cpp references were made from. The arithmetic (float vs double
// steps, truncation vs rounding) follows that code's, re-derived here; this
// file is compiled with -ffp-contract=off so no compiler fuses a multiply and
// an add into one rounding that llama.cpp's x86-64 build does not make.
//
// Neither resize is the textbook or Pillow one:
// * bilinear: corner-aligned sampling (source x = x * (sw-1)/(tw-1)), the
//   two lerps in float, the result truncated (not rounded) to u8;
// * bicubic: source x = x * sw/tw (left-aligned, no half-pixel offset),
//   samples clamped to the edge, a cubic through the 4 neighbours per axis
//   (Keys-like coefficients -1/3, 1/2, -1/6 from differences to the base
//   sample), rows first then columns, rounded and clamped to [0, 255].
//
// Thread-safety: pure functions (thread-safe).
#pragma once

#include <array>
#include <cstdint>

#include "vision/rgb_image.h"

namespace les::vision {

// The resampling filter of resize_image.
enum class ResizeAlgo { bilinear, bicubic };

// How resize_image fits the image into the target size.
enum class ResizePad {
  none,  // stretch to exactly the target size (the aspect ratio may change)
  ceil,  // keep the aspect ratio: scale s = min(tw/w, th/h) (float), resize to
         // min(ceil(w*s), tw) x min(ceil(h*s), th), paste centred at offset
         // ((tw-nw)/2, (th-nh)/2) (integer division) on the pad colour
};

// `src` resized to width x height with `algo` and `pad` (llama.cpp's
// img_tool::resize): an exact copy when the size is unchanged. pad_color is
// the RGB of the bars PAD ceil leaves. Preconditions (the caller's bounds):
// src non-empty, width > 0, height > 0; the result has width * height pixels.
RgbImage resize_image(const RgbImage& src, int32_t width, int32_t height, ResizeAlgo algo, ResizePad pad,
                      std::array<uint8_t, 3> pad_color = {0, 0, 0});

// llama.cpp's bilinear resize to exactly width x height (see above).
// Preconditions: src non-empty, width > 0, height > 0.
RgbImage resize_bilinear(const RgbImage& src, int32_t width, int32_t height);

// llama.cpp's bicubic resize to exactly width x height (see above).
// Preconditions: src non-empty, width > 0, height > 0.
RgbImage resize_bicubic(const RgbImage& src, int32_t width, int32_t height);

// The width x height rectangle of `src` whose top-left pixel is (x, y).
// Precondition: the rectangle lies inside src and is non-empty.
RgbImage crop_image(const RgbImage& src, int32_t x, int32_t y, int32_t width, int32_t height);

}  // namespace les::vision
