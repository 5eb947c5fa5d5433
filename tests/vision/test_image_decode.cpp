// Image decoding (vision/image_decode.h): PPM/PGM/PNG/JPEG through stb_image
// to RGB8, from memory and from a file, and the refusals (empty, not an
// image, zero size, above the pixel bound, corrupt, truncated, missing file).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include <stb/stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include "support/fixtures.h"
#include "vision/image_decode.h"

using namespace les;
using namespace les::vision;

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// A deterministic RGB test pattern (gradients plus a hash), w x h.
std::vector<uint8_t> pattern(int w, int h) {
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = px.data() + (static_cast<size_t>(y) * w + x) * 3;
      p[0] = static_cast<uint8_t>(x * 255 / std::max(1, w - 1));
      p[1] = static_cast<uint8_t>(y * 255 / std::max(1, h - 1));
      p[2] = static_cast<uint8_t>((x * 7 + y * 13) & 0xff);
    }
  return px;
}

void append(void* ctx, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(ctx);
  out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
}

std::vector<uint8_t> encode_png(const std::vector<uint8_t>& px, int w, int h, int comp) {
  std::vector<uint8_t> out;
  REQUIRE(stbi_write_png_to_func(append, &out, w, h, comp, px.data(), w * comp) != 0);
  return out;
}

std::vector<uint8_t> encode_jpeg(const std::vector<uint8_t>& px, int w, int h) {
  std::vector<uint8_t> out;
  REQUIRE(stbi_write_jpg_to_func(append, &out, w, h, 3, px.data(), 95) != 0);
  return out;
}

std::vector<uint8_t> ppm(int w, int h, const std::vector<uint8_t>& px) {
  std::vector<uint8_t> out = bytes_of("P6\n" + std::to_string(w) + " " + std::to_string(h) + "\n255\n");
  out.insert(out.end(), px.begin(), px.end());
  return out;
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST_CASE("PPM, PGM and PNG decode to the exact RGB8 pixels", "[vision]") {
  const int w = 37, h = 23;
  const std::vector<uint8_t> px = pattern(w, h);
  for (const auto& [name, data] : {std::pair{"ppm", ppm(w, h, px)}, std::pair{"png", encode_png(px, w, h, 3)}}) {
    INFO(name);
    auto img = decode_image(data);
    INFO(img.status().to_string());
    REQUIRE(img.ok());
    CHECK(img->width == w);
    CHECK(img->height == h);
    CHECK(img->pixels == px);
  }
  // Grey (PGM P5 and 1-channel PNG) is replicated; alpha is dropped.
  std::vector<uint8_t> grey(static_cast<size_t>(w) * h), rgba(static_cast<size_t>(w) * h * 4);
  for (size_t i = 0; i < grey.size(); ++i) {
    grey[i] = static_cast<uint8_t>(i * 5);
    for (int c = 0; c < 3; ++c) rgba[i * 4 + c] = px[i * 3 + c];
    rgba[i * 4 + 3] = static_cast<uint8_t>(i);
  }
  std::vector<uint8_t> pgm = bytes_of("P5\n37 23\n255\n");
  pgm.insert(pgm.end(), grey.begin(), grey.end());
  for (const auto& data : {pgm, encode_png(grey, w, h, 1)}) {
    auto img = decode_image(data);
    REQUIRE(img.ok());
    for (size_t i = 0; i < grey.size(); ++i)
      for (int c = 0; c < 3; ++c) REQUIRE(img->pixels[i * 3 + c] == grey[i]);
  }
  auto img = decode_image(encode_png(rgba, w, h, 4));
  REQUIRE(img.ok());
  CHECK(img->pixels == px);
}

TEST_CASE("JPEG decodes to RGB8 close to the encoded pixels", "[vision]") {
  const int w = 64, h = 48;
  const std::vector<uint8_t> px = pattern(w, h);
  auto img = decode_image(encode_jpeg(px, w, h));
  INFO(img.status().to_string());
  REQUIRE(img.ok());
  REQUIRE(img->width == w);
  REQUIRE(img->height == h);
  // Lossy: quality 95 on smooth gradients stays within a few levels on average.
  double sum = 0;
  for (size_t i = 0; i < px.size(); ++i) sum += std::abs(int(img->pixels[i]) - int(px[i]));
  CHECK(sum / static_cast<double>(px.size()) < 6.0);
}

TEST_CASE("an image file decodes as its bytes do; a missing file is an io error naming it", "[vision]") {
  LES_REQUIRE_FIXTURE(path, "multimodal/test-448x224.ppm");
  auto img = decode_image_file(path);
  INFO(img.status().to_string());
  REQUIRE(img.ok());
  CHECK(img->width == 448);
  CHECK(img->height == 224);
  const std::vector<uint8_t> file = read_all(path);
  const std::string header = "P6\n448 224\n255\n";
  REQUIRE(file.size() == header.size() + img->pixels.size());
  CHECK(std::equal(img->pixels.begin(), img->pixels.end(), file.begin() + static_cast<long>(header.size())));
  auto mem = decode_image(file);
  REQUIRE(mem.ok());
  CHECK(mem->pixels == img->pixels);

  const std::string dir = les::test::temp_dir() + "/les-image-decode-dir";
  rmdir(dir.c_str());
  REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  auto is_dir = decode_image_file(dir);
  rmdir(dir.c_str());
  REQUIRE_FALSE(is_dir.ok());
  CHECK(is_dir.status().message().find("is a directory") != std::string::npos);
  auto missing = decode_image_file(path + ".does-not-exist");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::io);
  CHECK(missing.status().message().find(".does-not-exist") != std::string::npos);

  ImageDecodeLimits small;
  small.max_file_bytes = 1000;
  auto big = decode_image_file(path, small);
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().code() == StatusCode::invalid_argument);
}

TEST_CASE("bad images are refused with a status naming the problem", "[vision]") {
  auto refused = [](const std::vector<uint8_t>& data, StatusCode code, const std::string& words,
                    const ImageDecodeLimits& lim = {}) {
    INFO(data.size() << " bytes starting '" << std::string(data.begin(), data.begin() + std::min<size_t>(2, data.size()))
                     << "', expecting '" << words << "'");
    auto img = decode_image(data, lim);
    INFO(img.status().to_string());
    REQUIRE_FALSE(img.ok());
    CHECK(img.status().code() == code);
    CHECK(img.status().message().find(words) != std::string::npos);
  };
  SECTION("empty") { refused({}, StatusCode::invalid_argument, "empty"); }
  SECTION("not an image") { refused(bytes_of("hello, this is text and not a picture"), StatusCode::format, "not a PNG"); }
  SECTION("zero size in the header") {
    refused(bytes_of("P6\n0 5\n255\n"), StatusCode::format, "");
    refused(bytes_of("P6\n5 0\n255\n"), StatusCode::format, "");
  }
  SECTION("a PNM header field that is not a decimal number is named") {
    refused(bytes_of("P6\n-5 4\n255\n"), StatusCode::format, "PNM header's width is not a decimal number (found '-')");
    refused(bytes_of("P5\n5 x\n255\n"), StatusCode::format, "height is not a decimal number (found 'x')");
    refused(bytes_of("P6\n5 4"), StatusCode::format, "PNM header is incomplete (no maxval)");
  }
  SECTION("above the pixel bound, refused from the header without decoding") {
    // A PNG whose IHDR declares 100000 x 100000 (stb itself refuses the header
    // and names only the last format it tried): the size limit is named.
    std::vector<uint8_t> png = encode_png(pattern(4, 3), 4, 3, 3);
    for (int at : {16, 20}) {
      png[at] = 0x00;
      png[at + 1] = 0x01;
      png[at + 2] = 0x86;
      png[at + 3] = 0xa0;  // 100000, big-endian
    }
    refused(png, StatusCode::invalid_argument, "100000 x 100000 pixels is above the limit");
    refused(bytes_of("P6\n100000 100000\n255\n"), StatusCode::invalid_argument, "above the limit");
    ImageDecodeLimits lim;
    lim.max_pixels = 100;
    refused(ppm(11, 10, pattern(11, 10)), StatusCode::invalid_argument, "11 x 10 pixels is above the limit of 100 pixels", lim);
  }
  SECTION("truncated") {
    const std::vector<uint8_t> px = pattern(40, 30);
    std::vector<uint8_t> p = ppm(40, 30, px);
    p.resize(p.size() - 100);
    refused(p, StatusCode::format, "truncated PNM");
    std::vector<uint8_t> p16 = bytes_of("P5\n4 3\n65535\n");  // 16-bit samples: 24 bytes needed
    p16.resize(p16.size() + 12, 7);
    refused(p16, StatusCode::format, "needs 24 bytes");
    std::vector<uint8_t> png = encode_png(px, 40, 30, 3);
    png.resize(png.size() / 2);
    refused(png, StatusCode::format, "");
    std::vector<uint8_t> jpg = encode_jpeg(px, 40, 30);
    jpg.resize(jpg.size() / 2);
    refused(jpg, StatusCode::format, "");
    refused(std::vector<uint8_t>(png.begin(), png.begin() + 20), StatusCode::format, "");
  }
  SECTION("corrupt") {
    const std::vector<uint8_t> px = pattern(40, 30);
    std::vector<uint8_t> png = encode_png(px, 40, 30, 3);
    png[24] = 3;  // IHDR bit depth 3: no such PNG
    refused(png, StatusCode::format, "");
    std::vector<uint8_t> png2 = encode_png(px, 40, 30, 3);
    png2[25] = 7;  // IHDR colour type 7: no such PNG
    refused(png2, StatusCode::format, "");
    std::vector<uint8_t> p = ppm(40, 30, px);
    p[1] = '9';  // "P9": no such PNM
    refused(p, StatusCode::format, "");
    std::vector<uint8_t> zero_max = bytes_of("P6\n4 3\n0\n");
    zero_max.resize(zero_max.size() + 36, 1);
    refused(zero_max, StatusCode::format, "maxval 0");
  }
}
