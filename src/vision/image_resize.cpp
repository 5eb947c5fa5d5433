#include "vision/image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace les::vision {
namespace {

RgbImage blank(int32_t width, int32_t height) {
  RgbImage img;
  img.width = width;
  img.height = height;
  img.pixels.assign(static_cast<size_t>(width) * static_cast<size_t>(height) * 3, 0);
  return img;
}

int32_t clamp_to(int32_t v, int32_t hi) { return std::max(0, std::min(v, hi)); }

// Linear interpolation in float, in llama.cpp's form s + (e - s) * t.
float lerp(float s, float e, float t) { return s + (e - s) * t; }

// The cubic through samples p[-1..2] (given as differences to p[0]) at
// fraction t in [0, 1); the coefficients are computed in double and stored
// as float, the polynomial is evaluated in float, as llama.cpp does.
float cubic(float d0, float base, float d2, float d3, float t) {
  const float a0 = base;
  const float a1 = static_cast<float>(-1.0 / 3 * d0 + d2 - 1.0 / 6 * d3);
  const float a2 = static_cast<float>(1.0 / 2 * d0 + 1.0 / 2 * d2);
  const float a3 = static_cast<float>(-1.0 / 6 * d0 - 1.0 / 2 * d2 + 1.0 / 6 * d3);
  return a0 + a1 * t + a2 * t * t + a3 * t * t * t;
}

}  // namespace

RgbImage resize_bilinear(const RgbImage& src, int32_t width, int32_t height) {
  RgbImage dst = blank(width, height);
  const int32_t sw = src.width, sh = src.height;
  // Corner-aligned: output 0 and width-1 sample source 0 and sw-1.
  const float x_ratio = width > 1 ? static_cast<float>(sw - 1) / static_cast<float>(width - 1) : 0.0f;
  const float y_ratio = height > 1 ? static_cast<float>(sh - 1) / static_cast<float>(height - 1) : 0.0f;
  for (int32_t y = 0; y < height; ++y) {
    const float py = static_cast<float>(y) * y_ratio;
    const int32_t y0 = std::min(static_cast<int32_t>(py), sh - 1);
    const int32_t y1 = std::min(y0 + 1, sh - 1);
    const float yf = py - static_cast<float>(y0);
    for (int32_t x = 0; x < width; ++x) {
      const float px = static_cast<float>(x) * x_ratio;
      const int32_t x0 = std::min(static_cast<int32_t>(px), sw - 1);
      const int32_t x1 = std::min(x0 + 1, sw - 1);
      const float xf = px - static_cast<float>(x0);
      const uint8_t* p00 = src.at(x0, y0);
      const uint8_t* p10 = src.at(x1, y0);
      const uint8_t* p01 = src.at(x0, y1);
      const uint8_t* p11 = src.at(x1, y1);
      uint8_t* out = dst.at(x, y);
      for (int c = 0; c < 3; ++c) {
        const float top = lerp(p00[c], p10[c], xf);
        const float bottom = lerp(p01[c], p11[c], xf);
        out[c] = static_cast<uint8_t>(lerp(top, bottom, yf));  // truncated, in [0, 255] by construction
      }
    }
  }
  return dst;
}

RgbImage resize_bicubic(const RgbImage& src, int32_t width, int32_t height) {
  RgbImage dst = blank(width, height);
  const int32_t sw = src.width, sh = src.height;
  const float tx = static_cast<float>(sw) / static_cast<float>(width);
  const float ty = static_cast<float>(sh) / static_cast<float>(height);
  for (int32_t i = 0; i < height; ++i) {
    const float fy = ty * static_cast<float>(i);
    const int32_t y = static_cast<int32_t>(fy);
    const float dy = fy - static_cast<float>(y);
    for (int32_t j = 0; j < width; ++j) {
      const float fx = tx * static_cast<float>(j);
      const int32_t x = static_cast<int32_t>(fx);
      const float dx = fx - static_cast<float>(x);
      const int32_t xm = clamp_to(x - 1, sw - 1), x0 = clamp_to(x, sw - 1);
      const int32_t xp = clamp_to(x + 1, sw - 1), xq = clamp_to(x + 2, sw - 1);
      uint8_t* out = dst.at(j, i);
      for (int c = 0; c < 3; ++c) {
        float col[4];  // the row cubics at dx, for source rows y-1..y+2
        for (int r = 0; r < 4; ++r) {
          const int32_t yy = clamp_to(y - 1 + r, sh - 1);
          const int base = src.at(x0, yy)[c];
          col[r] = cubic(static_cast<float>(src.at(xm, yy)[c] - base), static_cast<float>(base),
                         static_cast<float>(src.at(xp, yy)[c] - base), static_cast<float>(src.at(xq, yy)[c] - base), dx);
        }
        const float v = cubic(col[0] - col[1], col[1], col[2] - col[1], col[3] - col[1], dy);
        out[c] = static_cast<uint8_t>(std::min(std::max(std::round(v), 0.0f), 255.0f));
      }
    }
  }
  return dst;
}

RgbImage crop_image(const RgbImage& src, int32_t x, int32_t y, int32_t width, int32_t height) {
  RgbImage dst = blank(width, height);
  for (int32_t r = 0; r < height; ++r)
    std::memcpy(dst.at(0, r), src.at(x, y + r), static_cast<size_t>(width) * 3);
  return dst;
}

RgbImage resize_image(const RgbImage& src, int32_t width, int32_t height, ResizeAlgo algo, ResizePad pad,
                      std::array<uint8_t, 3> pad_color) {
  if (src.width == width && src.height == height) return src;
  auto run = [&](int32_t w, int32_t h) {
    return algo == ResizeAlgo::bilinear ? resize_bilinear(src, w, h) : resize_bicubic(src, w, h);
  };
  if (pad == ResizePad::none) return run(width, height);
  const float scale = std::min(static_cast<float>(width) / static_cast<float>(src.width),
                               static_cast<float>(height) / static_cast<float>(src.height));
  const int32_t nw = std::min(static_cast<int32_t>(std::ceil(static_cast<float>(src.width) * scale)), width);
  const int32_t nh = std::min(static_cast<int32_t>(std::ceil(static_cast<float>(src.height) * scale)), height);
  const RgbImage inner = run(std::max(nw, 1), std::max(nh, 1));
  RgbImage dst = blank(width, height);
  for (size_t i = 0; i < dst.pixels.size(); i += 3) std::memcpy(dst.pixels.data() + i, pad_color.data(), 3);
  const int32_t ox = (width - inner.width) / 2, oy = (height - inner.height) / 2;
  for (int32_t r = 0; r < inner.height; ++r)
    std::memcpy(dst.at(ox, oy + r), inner.at(0, r), static_cast<size_t>(inner.width) * 3);
  return dst;
}

}  // namespace les::vision
