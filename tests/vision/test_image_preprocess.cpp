// MiniCPM-V preprocessing (vision/image_preprocess.h, image_resize.h) against
// llama.cpp's references in ../shared/fixtures/multimodal: the 224x224 image's
// normalised pixels equal the `inp_raw` tap bit for bit; the 448x224 image's
// chunks (overview 336x168, grid 2x1, slices 224x224, tokens 18/16/16) match
// its JSON. Plus hand-worked resize values, PAD ceil's black bars, the token
// bound and the refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/fixtures.h"
#include "vision/image_decode.h"
#include "vision/image_preprocess.h"
#include "vision/image_resize.h"

using namespace les;
using namespace les::vision;

namespace {

PreprocessParams tiny_params() {
  PreprocessParams p;
  p.geometry.image_size = 224;  // the fixture mmproj: clip.vision.image_size
  return p;
}

nlohmann::json load_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

std::vector<float> read_floats(const std::string& path, size_t offset, size_t count) {
  std::ifstream f(path, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset * sizeof(float)));
  std::vector<float> v(count);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(float)));
  REQUIRE(static_cast<size_t>(f.gcount()) == count * sizeof(float));
  return v;
}

RgbImage image_of(int32_t w, int32_t h, std::vector<uint8_t> px) {
  auto img = rgb_image_from_pixels(px, w, h);
  REQUIRE(img.ok());
  return *img;
}

}  // namespace

TEST_CASE("224x224: one overview chunk whose pixels equal llama.cpp's inp_raw tap", "[vision]") {
  LES_REQUIRE_FIXTURE(ppm, "multimodal/test-224x224.ppm");
  LES_REQUIRE_FIXTURE(json_path, "multimodal/ref-224x224-fa_off.json");
  LES_REQUIRE_FIXTURE(taps, "multimodal/ref-224x224-fa_off.taps.bin");
  auto img = decode_image_file(ppm);
  REQUIRE(img.ok());
  auto pre = preprocess_image(*img, tiny_params());
  INFO(pre.status().to_string());
  REQUIRE(pre.ok());
  CHECK(pre->grid_cols == 0);
  CHECK(pre->grid_rows == 0);
  REQUIRE(pre->chunks.size() == 1);
  const ImageChunk& c = pre->chunks[0];
  CHECK(c.role == ChunkRole::overview);
  CHECK(c.width == 224);
  CHECK(c.height == 224);
  CHECK(c.n_tokens == 16);

  const nlohmann::json ref = load_json(json_path);
  const nlohmann::json* tap = nullptr;
  for (const auto& e : ref["taps_file"]["entries"])
    if (e["name"] == "inp_raw") tap = &e;
  REQUIRE(tap != nullptr);
  CHECK((*tap)["ne"] == nlohmann::json::array({224, 224, 3}));  // ggml [W, H, 3] = planar [3][H][W]
  const std::vector<float> want =
      read_floats(taps, (*tap)["offset_floats"].get<size_t>(), (*tap)["n_floats"].get<size_t>());
  REQUIRE(want.size() == c.pixels.size());
  float max_err = 0;
  for (size_t i = 0; i < want.size(); ++i) max_err = std::max(max_err, std::abs(want[i] - c.pixels[i]));
  WARN("224x224 inp_raw: max |LES - llama.cpp| = " << max_err);
  CHECK(max_err == 0.0f);
}

TEST_CASE("448x224: overview 336x168, grid 2x1, refined 448x224, two 224x224 slices, as the JSON says", "[vision]") {
  LES_REQUIRE_FIXTURE(ppm, "multimodal/test-448x224.ppm");
  LES_REQUIRE_FIXTURE(json_path, "multimodal/ref-448x224-fa_off.json");
  auto img = decode_image_file(ppm);
  REQUIRE(img.ok());
  auto pre = preprocess_image(*img, tiny_params());
  INFO(pre.status().to_string());
  REQUIRE(pre.ok());
  CHECK(pre->grid_cols == 2);
  CHECK(pre->grid_rows == 1);
  const nlohmann::json ref = load_json(json_path);
  std::vector<const nlohmann::json*> image_chunks;
  for (const auto& ch : ref["chunks"])
    if (ch["type"] == "image") image_chunks.push_back(&ch);
  REQUIRE(pre->chunks.size() == image_chunks.size());
  for (size_t i = 0; i < image_chunks.size(); ++i) {
    INFO("image chunk " << i);
    const nlohmann::json& r = *image_chunks[i];
    const ImageChunk& c = pre->chunks[i];
    CHECK((c.role == ChunkRole::overview ? "overview" : "slice") == r["role"].get<std::string>());
    CHECK(c.width == r["input_size_wh"][0].get<int32_t>());
    CHECK(c.height == r["input_size_wh"][1].get<int32_t>());
    CHECK(c.n_tokens == r["n_tokens"].get<int32_t>());
    CHECK(c.pixels.size() == static_cast<size_t>(c.width) * c.height * 3);
  }
  CHECK(pre->n_tokens() == ref["n_image_tokens_total"].get<int64_t>());
  const auto& log = ref["slicing"]["logged_summary"];
  CHECK(log["overview"] == nlohmann::json::array({pre->chunks[0].width, pre->chunks[0].height}));
  CHECK(log["grid_cols_rows"] == nlohmann::json::array({pre->grid_cols, pre->grid_rows}));
  // The refined size equals the image's, so the refined image is an exact
  // copy and each slice is a crop of the original, normalised.
  for (size_t s = 1; s < pre->chunks.size(); ++s) {
    const ImageChunk& c = pre->chunks[s];
    CHECK(c.row == 0);
    CHECK(c.col == static_cast<int32_t>(s) - 1);
    float max_err = 0;
    for (int ch = 0; ch < 3; ++ch)
      for (int y = 0; y < 224; ++y)
        for (int x = 0; x < 224; ++x) {
          const float want = (img->at(c.col * 224 + x, y)[ch] / 255.0f - 0.5f) / 0.5f;
          max_err = std::max(max_err, std::abs(want - c.pixels[(static_cast<size_t>(ch) * 224 + y) * 224 + x]));
        }
    CHECK(max_err == 0.0f);
  }
}

TEST_CASE("llama.cpp's bilinear and bicubic on hand-worked values", "[vision]") {
  const RgbImage two = image_of(2, 1, {0, 0, 0, 255, 255, 255});
  // Bilinear, corner-aligned: x * 1/3 of the way -> 85, 170 (truncated).
  const RgbImage bl = resize_bilinear(two, 4, 1);
  CHECK(std::vector<uint8_t>{bl.pixels[0], bl.pixels[3], bl.pixels[6], bl.pixels[9]} ==
        std::vector<uint8_t>{0, 85, 170, 255});
  // Bicubic, left-aligned (x = j * 0.5): j=1 is the cubic through 0,0,255,255
  // at 0.5: 106.25 + 31.875 - 10.625 = 127.5 -> 128; j=3 overshoots to 270.9 -> 255.
  const RgbImage bc = resize_bicubic(two, 4, 1);
  CHECK(std::vector<uint8_t>{bc.pixels[0], bc.pixels[3], bc.pixels[6], bc.pixels[9]} ==
        std::vector<uint8_t>{0, 128, 255, 255});
  // A constant image stays constant; the same size is an exact copy.
  const RgbImage flat = image_of(3, 5, std::vector<uint8_t>(45, 77));
  for (const RgbImage& r : {resize_bilinear(flat, 7, 2), resize_bicubic(flat, 2, 9)})
    for (uint8_t v : r.pixels) CHECK(v == 77);
  const RgbImage copy = resize_image(two, 2, 1, ResizeAlgo::bicubic, ResizePad::ceil);
  CHECK(copy.pixels == two.pixels);
}

TEST_CASE("PAD ceil keeps the aspect ratio and centres on black (10x500 -> refined 56x2240)", "[vision]") {
  // A bright image: every black pixel of a slice is padding.
  const RgbImage img = image_of(10, 500, std::vector<uint8_t>(10 * 500 * 3, 200));
  auto pre = preprocess_image(img, tiny_params());
  REQUIRE(pre.ok());
  CHECK(pre->grid_cols == 1);
  CHECK(pre->grid_rows == 2);
  REQUIRE(pre->chunks.size() == 3);
  CHECK(pre->chunks[0].width == 56);
  CHECK(pre->chunks[0].height == 504);
  CHECK(pre->chunks[0].n_tokens == 9);
  // s = min(56/10, 2240/500) = 4.48: resized to ceil(44.8) = 45 x 2240 at x offset (56-45)/2 = 5.
  for (size_t s = 1; s < 3; ++s) {
    const ImageChunk& c = pre->chunks[s];
    CHECK(c.width == 56);
    CHECK(c.height == 1120);
    CHECK(c.n_tokens == 20);
    for (int ch = 0; ch < 3; ++ch)
      for (int y = 0; y < c.height; y += 37)
        for (int x = 0; x < 56; ++x) {
          const float v = c.pixels[(static_cast<size_t>(ch) * c.height + y) * 56 + x];
          const bool bar = x < 5 || x >= 50;
          INFO("slice " << s << " x " << x << " y " << y);
          CHECK(v == (bar ? -1.0f : (200 / 255.0f - 0.5f) / 0.5f));
        }
  }
}

TEST_CASE("preprocess_image refuses bad input with a status", "[vision]") {
  const RgbImage ok = image_of(4, 4, std::vector<uint8_t>(48, 1));
  auto refused = [](const RgbImage& img, const PreprocessParams& p, const std::string& words) {
    auto r = preprocess_image(img, p);
    INFO(r.status().to_string());
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK(r.status().message().find(words) != std::string::npos);
  };
  refused(RgbImage{}, tiny_params(), "zero-size");
  RgbImage short_px = ok;
  short_px.pixels.pop_back();
  refused(short_px, tiny_params(), "needs 48 bytes");
  PreprocessParams p = tiny_params();
  p.std[1] = 0.0f;
  refused(ok, p, "std");
  p = tiny_params();
  p.mean[2] = std::nanf("");
  refused(ok, p, "finite");
  p = tiny_params();
  p.geometry.image_size = 100;
  refused(ok, p, "multiple");
  // A 50000 x 10 strip needs 1069 image tokens at S = 224, above the default bound of 640.
  const RgbImage strip = image_of(50000, 10, std::vector<uint8_t>(50000 * 10 * 3, 9));
  refused(strip, tiny_params(), "too extreme");
  p = tiny_params();
  p.max_image_tokens = 2000;
  auto big = preprocess_image(strip, p);
  REQUIRE(big.ok());
  CHECK(big->n_tokens() == 1069);
}
