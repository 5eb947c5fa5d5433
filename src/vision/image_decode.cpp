#include "vision/image_decode.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

// stb_image is compiled here, once, with internal linkage (STBI_IMAGE_STATIC:
// no symbol clashes with an application that links its own copy) and only
// the three formats LES accepts (a smaller attack surface). Decoding works on
// memory only (STBI_NO_STDIO: LES reads files itself, with a size bound).
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNM
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif
#include <stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace les::vision {
namespace {

struct StbiFree {
  void operator()(unsigned char* p) const noexcept { stbi_image_free(p); }
};

std::string stb_reason() {
  const char* r = stbi_failure_reason();
  return r != nullptr ? std::string(r) : std::string("unknown reason");
}

// stb_image 2.27 (Debian 12) decodes a binary PPM/PGM whose pixel data is
// cut short without an error (the missing bytes stay uninitialised), so the
// data size is checked here from the header: "P5"/"P6", width, height and
// maxval as decimal integers separated by whitespace and '#' comments (the
// rules of stb's own PNM header reader), one whitespace byte, then width *
// height * channels samples of 1 byte (maxval < 256) or 2. Other formats pass.
Status check_pnm_complete(std::span<const uint8_t> b) {
  if (b.size() < 2 || b[0] != 'P' || (b[1] != '5' && b[1] != '6')) return Status();
  size_t at = 2;
  auto is_space = [](uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  uint64_t v[3] = {0, 0, 0};
  for (uint64_t& value : v) {
    for (;;) {  // whitespace and comments
      while (at < b.size() && is_space(b[at])) ++at;
      if (at >= b.size() || b[at] != '#') break;
      while (at < b.size() && b[at] != '\n' && b[at] != '\r') ++at;
    }
    if (at >= b.size() || b[at] < '0' || b[at] > '9') return format_error("image: PNM header is incomplete");
    while (at < b.size() && b[at] >= '0' && b[at] <= '9' && value < (uint64_t{1} << 40)) value = value * 10 + (b[at++] - '0');
  }
  if (v[2] == 0 || v[2] > 65535) return format_error("image: PNM maxval " + std::to_string(v[2]) + " is not in [1, 65535]");
  ++at;  // the one whitespace byte before the samples
  const uint64_t want = v[0] * v[1] * (b[1] == '6' ? 3 : 1) * (v[2] > 255 ? 2 : 1);
  const uint64_t have = at < b.size() ? b.size() - at : 0;
  if (have < want)
    return format_error("image: truncated PNM: " + std::to_string(v[0]) + " x " + std::to_string(v[1]) + " needs " +
                        std::to_string(want) + " bytes of pixel data, the data holds " + std::to_string(have));
  return Status();
}

}  // namespace

Result<RgbImage> decode_image(std::span<const uint8_t> bytes, const ImageDecodeLimits& limits) {
  if (bytes.empty()) return invalid_argument_error("image: the data is empty (0 bytes)");
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return invalid_argument_error("image: " + std::to_string(bytes.size()) + " bytes is above the decoder's limit of " +
                                  std::to_string(INT_MAX));
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = static_cast<int>(bytes.size());
  int w = 0, h = 0, comp = 0;
  // The header alone first: its size is checked before any pixel memory is allocated.
  if (stbi_info_from_memory(data, len, &w, &h, &comp) == 0)
    return format_error("image: not a PNG, JPEG or binary PPM/PGM image, or its header is corrupt (" + stb_reason() +
                        ")");
  if (w <= 0 || h <= 0)
    return format_error("image: zero-size image in the header (" + std::to_string(w) + " x " + std::to_string(h) +
                        " pixels)");
  LES_RETURN_IF_ERROR(check_image_size(w, h, limits.max_pixels, "image"));
  LES_RETURN_IF_ERROR(check_pnm_complete(bytes));
  int dw = 0, dh = 0, dcomp = 0;
  std::unique_ptr<unsigned char, StbiFree> px(stbi_load_from_memory(data, len, &dw, &dh, &dcomp, 3));
  if (!px) return format_error("image: corrupt or truncated " + std::to_string(w) + " x " + std::to_string(h) +
                               " image data (" + stb_reason() + ")");
  if (dw != w || dh != h)
    return format_error("image: the header says " + std::to_string(w) + " x " + std::to_string(h) +
                        " but the decoder produced " + std::to_string(dw) + " x " + std::to_string(dh));
  RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.assign(px.get(), px.get() + static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  return img;
}

Result<RgbImage> decode_image_file(const std::string& path, const ImageDecodeLimits& limits) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return io_error("image '" + path + "': cannot open (" + std::strerror(errno) + ")");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(f, &std::fclose);
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  for (;;) {
    const size_t got = std::fread(buf, 1, sizeof buf, f);
    if (got > 0) {
      if (static_cast<int64_t>(bytes.size() + got) > limits.max_file_bytes)
        return invalid_argument_error("image '" + path + "': the file is larger than the limit of " +
                                      std::to_string(limits.max_file_bytes) + " bytes");
      bytes.insert(bytes.end(), buf, buf + got);
    }
    if (got < sizeof buf) break;
  }
  if (std::ferror(f) != 0) return io_error("image '" + path + "': read error");
  Result<RgbImage> img = decode_image(bytes, limits);
  if (!img.ok()) return img.status().with_context("image file '" + path + "'");
  return img;
}

}  // namespace les::vision
