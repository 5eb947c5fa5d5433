#include "vision/image_decode.h"

#include <sys/stat.h>

#include <algorithm>
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

// A binary PPM/PGM header ("P5"/"P6"): width, height and maxval as decimal
// integers separated by whitespace and '#' comments (the rules of stb's own
// PNM header reader), then one whitespace byte before the samples.
struct PnmHeader {
  uint64_t width = 0, height = 0, maxval = 0;
  size_t data_at = 0;  // offset of the first sample byte
  int channels = 0;    // 3 for P6, 1 for P5
};

bool is_pnm(std::span<const uint8_t> b) { return b.size() >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6'); }

// The header's three fields. stb reads a field that does not start with a
// digit (a sign, a letter) as 0, so "-5" would surface as a zero-size image:
// here it is refused naming the field and the byte found. Values are capped
// at 2^40 while parsing (the pixel-count limit refuses them later).
Result<PnmHeader> parse_pnm_header(std::span<const uint8_t> b) {
  static constexpr const char* kField[3] = {"width", "height", "maxval"};
  PnmHeader h;
  h.channels = b[1] == '6' ? 3 : 1;
  size_t at = 2;
  auto is_space = [](uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  uint64_t* v[3] = {&h.width, &h.height, &h.maxval};
  for (int f = 0; f < 3; ++f) {
    for (;;) {  // whitespace and comments
      while (at < b.size() && is_space(b[at])) ++at;
      if (at >= b.size() || b[at] != '#') break;
      while (at < b.size() && b[at] != '\n' && b[at] != '\r') ++at;
    }
    if (at >= b.size()) return format_error(std::string("image: PNM header is incomplete (no ") + kField[f] + ")");
    if (b[at] < '0' || b[at] > '9') {
      const uint8_t c = b[at];
      const std::string shown = (c >= 0x20 && c < 0x7f) ? "'" + std::string(1, static_cast<char>(c)) + "'"
                                                         : "byte " + std::to_string(c);
      return format_error(std::string("image: PNM header's ") + kField[f] + " is not a decimal number (found " +
                          shown + ")");
    }
    while (at < b.size() && b[at] >= '0' && b[at] <= '9' && *v[f] < (uint64_t{1} << 40))
      *v[f] = *v[f] * 10 + (b[at++] - '0');
  }
  if (h.maxval == 0 || h.maxval > 65535)
    return format_error("image: PNM maxval " + std::to_string(h.maxval) + " is not in [1, 65535]");
  h.data_at = at + 1;  // the one whitespace byte before the samples
  return h;
}

// stb_image 2.27 (Debian 12) decodes a binary PPM/PGM whose pixel data is
// cut short without an error (the missing bytes stay uninitialised), so the
// data size is checked from the header: width * height * channels samples of
// 1 byte (maxval < 256) or 2. Called after the pixel-count limit (no overflow).
Status check_pnm_complete(std::span<const uint8_t> b, const PnmHeader& h) {
  const uint64_t want = h.width * h.height * static_cast<uint64_t>(h.channels) * (h.maxval > 255 ? 2 : 1);
  const uint64_t have = h.data_at < b.size() ? b.size() - h.data_at : 0;
  if (have < want)
    return format_error("image: truncated PNM: " + std::to_string(h.width) + " x " + std::to_string(h.height) +
                        " needs " + std::to_string(want) + " bytes of pixel data, the data holds " +
                        std::to_string(have));
  return Status();
}

// A PNG's size from its IHDR chunk (signature, length, "IHDR", big-endian
// width and height: PNG specification, 11.2.2), read without stb. stb refuses
// a header above its own decoder limit and then reports the last format it
// tried ("unknown image type"); this lets the size limit name the size.
bool png_header_size(std::span<const uint8_t> b, int64_t& w, int64_t& h) {
  static constexpr uint8_t kSig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  if (b.size() < 24 || !std::equal(kSig, kSig + 8, b.begin()) || std::memcmp(b.data() + 12, "IHDR", 4) != 0)
    return false;
  auto be32 = [&](size_t at) {
    return (int64_t{b[at]} << 24) | (int64_t{b[at + 1]} << 16) | (int64_t{b[at + 2]} << 8) | int64_t{b[at + 3]};
  };
  w = be32(16);
  h = be32(20);
  return true;
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
  Result<PnmHeader> pnm = PnmHeader{};
  if (is_pnm(bytes)) {
    pnm = parse_pnm_header(bytes);
    if (!pnm.ok()) return pnm.status();
  }
  if (stbi_info_from_memory(data, len, &w, &h, &comp) == 0) {
    int64_t pw = 0, ph = 0;
    if (png_header_size(bytes, pw, ph) && pw > 0 && ph > 0)
      LES_RETURN_IF_ERROR(check_image_size(pw, ph, limits.max_pixels, "image"));
    return format_error("image: not a PNG, JPEG or binary PPM/PGM image, or its header is corrupt (" + stb_reason() +
                        ")");
  }
  if (w <= 0 || h <= 0)
    return format_error("image: zero-size image in the header (" + std::to_string(w) + " x " + std::to_string(h) +
                        " pixels)");
  LES_RETURN_IF_ERROR(check_image_size(w, h, limits.max_pixels, "image"));
  if (is_pnm(bytes)) LES_RETURN_IF_ERROR(check_pnm_complete(bytes, *pnm));
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
  struct stat st {};
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
    return invalid_argument_error("image '" + path + "': is a directory, not an image file");
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  int read_errno = 0;
  for (;;) {
    errno = 0;
    const size_t got = std::fread(buf, 1, sizeof buf, f);
    if (got < sizeof buf) read_errno = errno;
    if (got > 0) {
      if (static_cast<int64_t>(bytes.size() + got) > limits.max_file_bytes)
        return invalid_argument_error("image '" + path + "': the file is larger than the limit of " +
                                      std::to_string(limits.max_file_bytes) + " bytes");
      bytes.insert(bytes.end(), buf, buf + got);
    }
    if (got < sizeof buf) break;
  }
  if (std::ferror(f) != 0)
    return io_error("image '" + path + "': read error (" +
                    (read_errno != 0 ? std::string(std::strerror(read_errno)) : std::string("unknown cause")) + ")");
  Result<RgbImage> img = decode_image(bytes, limits);
  if (!img.ok()) return img.status().with_context("image file '" + path + "'");
  return img;
}

}  // namespace les::vision
