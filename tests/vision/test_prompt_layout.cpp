// The MiniCPM-V prompt layout (vision/prompt_layout.h): marker tokens found by
// exact piece, and the text/image chunk sequence of the 448x224 and 224x224
// prompts token for token against llama.cpp's JSON references
// (../shared/fixtures/multimodal/ref-*-fa_off.json `chunks`).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "support/fixtures.h"
#include "vision/image_decode.h"
#include "vision/prompt_layout.h"

using namespace les;
using namespace les::vision;

namespace {

const char* kPrompt = "<|im_start|>user\n<__media__>Describe the image.<|im_end|>\n<|im_start|>assistant\n";

std::unique_ptr<Model> load_model(const std::string& path) {
  auto m = Model::load(path, {});
  INFO(m.status().to_string());
  REQUIRE(m.ok());
  REQUIRE((*m)->has_tokenizer());
  return std::move(m).value();
}

nlohmann::json load_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// The preprocessed shape of a fixture image (S = 224, the tiny mmproj).
ImageShape fixture_shape(const std::string& ppm) {
  auto img = decode_image_file(ppm);
  REQUIRE(img.ok());
  PreprocessParams p;
  p.geometry.image_size = 224;
  auto pre = preprocess_image(*img, p);
  REQUIRE(pre.ok());
  return image_shape(*pre);
}

void check_layout_against(const std::string& name) {
  LES_REQUIRE_FIXTURE(model_path, "multimodal/qwen35moe-mm-F16.gguf");
  LES_REQUIRE_FIXTURE(json_path, "multimodal/ref-" + name + "-fa_off.json");
  LES_REQUIRE_FIXTURE(ppm, "multimodal/test-" + name + ".ppm");
  const auto model = load_model(model_path);
  const nlohmann::json ref = load_json(json_path);
  REQUIRE(ref["prompt"].get<std::string>() == kPrompt);
  auto markers = find_image_markers(model->tokenizer());
  REQUIRE(markers.ok());
  const std::vector<ImageShape> shapes{fixture_shape(ppm)};
  auto chunks = build_prompt(model->tokenizer(), *markers, kPrompt, shapes);
  INFO(chunks.status().to_string());
  REQUIRE(chunks.ok());
  const auto& want = ref["chunks"];
  REQUIRE(chunks->size() == want.size());
  int32_t pos = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(name << " chunk " << i);
    const PromptChunk& c = (*chunks)[i];
    CHECK(pos == want[i]["n_pos_start"].get<int32_t>());
    if (want[i]["type"] == "text") {
      REQUIRE(c.kind == PromptChunk::Kind::text);
      CHECK(c.tokens == want[i]["tokens"].get<std::vector<int32_t>>());
    } else {
      REQUIRE(c.kind == PromptChunk::Kind::image);
      CHECK(c.image == 0);
      CHECK(c.chunk == want[i]["image_chunk_index"].get<int32_t>());
      CHECK(c.n_embd_rows == want[i]["n_tokens"].get<int32_t>());
      CHECK(c.n_positions() == want[i]["n_pos"].get<int32_t>());
    }
    pos += c.n_positions();
  }
  CHECK(pos == ref["n_prompt_pos"].get<int32_t>());
}

}  // namespace

TEST_CASE("the marker tokens are found by exact piece; a vocabulary without them is refused", "[vision]") {
  LES_REQUIRE_FIXTURE(mm, "multimodal/qwen35moe-mm-F16.gguf");
  LES_REQUIRE_FIXTURE(plain, "synthetic/qwen35moe-F16.gguf");
  const auto model = load_model(mm);
  auto m = find_image_markers(model->tokenizer());
  INFO(m.status().to_string());
  REQUIRE(m.ok());
  CHECK(m->image_start == 4096);
  CHECK(m->image_end == 4097);
  CHECK(m->slice_start == 4098);
  CHECK(m->slice_end == 4099);
  CHECK(m->row_end == 198);

  const auto plain_model = load_model(plain);
  auto none = find_image_markers(plain_model->tokenizer());
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::unsupported);
  const std::string msg = none.status().message();
  for (const char* t : {"<image>", "</image>", "<slice>", "</slice>"}) CHECK(msg.find(t) != std::string::npos);
  CHECK(msg.find("\\n") == std::string::npos);  // the vocabulary has "\n"
}

TEST_CASE("448x224 prompt layout equals llama.cpp's chunks token for token", "[vision]") {
  check_layout_against("448x224");
}

TEST_CASE("224x224 prompt layout equals llama.cpp's chunks token for token", "[vision]") {
  check_layout_against("224x224");
}

TEST_CASE("slice rows: \\n between rows, none after the last; images at each marker in order", "[vision]") {
  const ImageMarkerTokens m{10, 11, 12, 13, 14};
  ImageShape grid;
  grid.grid_cols = 2;
  grid.grid_rows = 2;
  grid.chunk_tokens = {5, 4, 4, 4, 4};
  std::vector<PromptChunk> out;
  REQUIRE(append_image_chunks(m, grid, 3, out).ok());
  // [10] ov [11 12] s0 [13 12] s1 [13 14 12] s2 [13 12] s3 [13]
  const std::vector<std::vector<int32_t>> texts{{10}, {11, 12}, {13, 12}, {13, 14, 12}, {13, 12}, {13}};
  REQUIRE(out.size() == 11);
  for (size_t i = 0; i < out.size(); ++i) {
    INFO("chunk " << i);
    if (i % 2 == 0) {
      REQUIRE(out[i].kind == PromptChunk::Kind::text);
      CHECK(out[i].tokens == texts[i / 2]);
    } else {
      REQUIRE(out[i].kind == PromptChunk::Kind::image);
      CHECK(out[i].image == 3);
      CHECK(out[i].chunk == static_cast<int32_t>(i / 2));
      CHECK(out[i].n_embd_rows == (i == 1 ? 5 : 4));
    }
  }
}

TEST_CASE("build_prompt and append_image_chunks refuse mismatched input", "[vision]") {
  LES_REQUIRE_FIXTURE(mm, "multimodal/qwen35moe-mm-F16.gguf");
  const auto model = load_model(mm);
  auto markers = find_image_markers(model->tokenizer());
  REQUIRE(markers.ok());
  ImageShape one;
  one.chunk_tokens = {16};
  const std::vector<ImageShape> shapes{one};
  auto no_marker = build_prompt(model->tokenizer(), *markers, "no marker here", shapes);
  REQUIRE_FALSE(no_marker.ok());
  CHECK(no_marker.status().code() == StatusCode::invalid_argument);
  CHECK(no_marker.status().message().find("0 media markers") != std::string::npos);
  auto two = build_prompt(model->tokenizer(), *markers, "<__media__> and <__media__>", shapes);
  CHECK(two.status().code() == StatusCode::invalid_argument);
  PromptOptions empty;
  empty.media_marker = "";
  CHECK(build_prompt(model->tokenizer(), *markers, "x", {}, empty).status().code() == StatusCode::invalid_argument);
  // No images and no marker: plain text.
  auto text = build_prompt(model->tokenizer(), *markers, "Describe the image.", {});
  REQUIRE(text.ok());
  REQUIRE(text->size() == 1);
  CHECK(text->front().tokens == std::vector<int32_t>{35, 3798, 822, 68, 262, 2939, 13});

  std::vector<PromptChunk> out;
  ImageShape bad;
  bad.grid_cols = 2;
  bad.grid_rows = 1;
  bad.chunk_tokens = {18, 16};  // one slice missing
  CHECK(append_image_chunks(*markers, bad, 0, out).code() == StatusCode::invalid_argument);
  bad.grid_cols = 0;
  bad.grid_rows = 3;
  CHECK(append_image_chunks(*markers, bad, 0, out).code() == StatusCode::invalid_argument);
  bad = one;
  bad.chunk_tokens = {0};
  CHECK(append_image_chunks(*markers, bad, 0, out).code() == StatusCode::invalid_argument);
  CHECK(out.empty());
}
