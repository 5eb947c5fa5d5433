// The whole image path without llama.cpp: image file -> decode (stb_image) ->
// preprocess (overview and slices, our bilinear/bicubic) -> vision encoder ->
// embeddings, for both fixture images against llama.cpp's fa_off
// embeddings per chunk (1e-2 absolute, as the encoder's own test and the
// fixture README). The 448x224 overview is a real bilinear resize (448x224 ->
// 336x168), so this checks our resize through the encoder. Then the
// embeddings go into the text model (prompt_layout, decode_embeddings) and
// greedy decoding is compared as in test_decode_embeddings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/model/context.h"
#include "core/model/model.h"
#include "kernels/thread_pool.h"
#include "support/fixtures.h"
#include "vision/image_decode.h"
#include "vision/image_preprocess.h"
#include "vision/mmproj_model.h"
#include "vision/prompt_layout.h"
#include "vision/vision_encoder.h"

using namespace les;
using namespace les::vision;

namespace {

constexpr float kEmbdTol = 1e-2f;

std::vector<float> read_all_floats(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  const auto n = static_cast<size_t>(f.tellg());
  std::vector<float> v(n / sizeof(float));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n));
  return v;
}

int32_t argmax(std::span<const float> l) {
  return static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
}

}  // namespace

TEST_CASE("image file to embeddings to greedy tokens, against llama.cpp", "[vision]") {
  LES_REQUIRE_FIXTURE(mmproj_path, "multimodal/mmproj-minicpmv4_6-tiny-F16.gguf");
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  auto text = Model::load(text_path, {});
  REQUIRE(text.ok());
  auto mm = MmprojModel::load(mmproj_path, (*text)->hparams().n_embd);
  INFO(mm.status().to_string());
  REQUIRE(mm.ok());
  const MmprojHparams& hp = (*mm)->hparams();
  PreprocessParams pp;
  pp.geometry.image_size = static_cast<int32_t>(hp.image_size);
  pp.geometry.patch_size = static_cast<int32_t>(hp.patch_size);
  pp.geometry.n_merge = static_cast<int32_t>(hp.n_merge);
  pp.mean = hp.image_mean;
  pp.std = hp.image_std;
  kernels::ThreadPool pool(2);
  VisionEncoder encoder(**mm, &pool);
  const int64_t E = (*text)->hparams().n_embd;

  for (const std::string name : {"448x224", "224x224"}) {
    INFO(name);
    std::ifstream jf(test::fixture_path("multimodal/ref-" + name + "-fa_off.json"));
    const nlohmann::json ref = nlohmann::json::parse(jf);
    const std::vector<float> want = read_all_floats(test::fixture_path("multimodal/ref-" + name + "-fa_off.embd.bin"));
    auto img = decode_image_file(test::fixture_path("multimodal/test-" + name + ".ppm"));
    REQUIRE(img.ok());
    auto pre = preprocess_image(*img, pp);
    REQUIRE(pre.ok());

    // Every chunk's embeddings, concatenated in chunk order as the reference file.
    std::vector<float> embd;
    for (size_t c = 0; c < pre->chunks.size(); ++c) {
      const ImageChunk& ch = pre->chunks[c];
      std::vector<float> out;
      Status st = encoder.encode(ch.pixels.data(), ch.width, ch.height, out);
      INFO(st.to_string());
      REQUIRE(st.ok());
      REQUIRE(static_cast<int64_t>(out.size()) == ch.n_tokens * E);
      const size_t at = embd.size();
      REQUIRE(at + out.size() <= want.size());
      float max_err = 0;
      for (size_t i = 0; i < out.size(); ++i) max_err = std::max(max_err, std::abs(out[i] - want[at + i]));
      WARN(name << " chunk " << c << " (" << ch.width << "x" << ch.height << "): max |embd - llama.cpp| = " << max_err);
      CHECK(max_err <= kEmbdTol);
      embd.insert(embd.end(), out.begin(), out.end());
    }
    REQUIRE(embd.size() == want.size());

    // Into the text model: greedy tokens as in test_decode_embeddings (the
    // 448x224 prompt has a near tie at step 10, margin 0.0015 there, on
    // which llama.cpp 81ff7abe itself picks a different token on an AVX2 and
    // an AVX-512 build from the same embeddings: see kLogitTol there).
    ContextParams cp;
    cp.n_ctx = 256;
    auto ctx = Context::create(**text, cp);
    REQUIRE(ctx.ok());
    auto markers = find_image_markers((*text)->tokenizer());
    REQUIRE(markers.ok());
    const std::vector<ImageShape> shapes{image_shape(*pre)};
    auto chunks = build_prompt((*text)->tokenizer(), *markers, ref["prompt"].get<std::string>(), shapes);
    REQUIRE(chunks.ok());
    size_t row = 0;
    for (const PromptChunk& c : *chunks) {
      if (c.kind == PromptChunk::Kind::text) {
        REQUIRE((*ctx)->decode(c.tokens).ok());
      } else {
        REQUIRE((*ctx)->decode_embeddings(std::span<const float>(embd.data() + row * E, static_cast<size_t>(c.n_embd_rows * E))).ok());
        row += static_cast<size_t>(c.n_embd_rows);
      }
    }
    const auto gen = ref["generation"]["token_ids"].get<std::vector<int32_t>>();
    std::vector<int32_t> ours;
    for (size_t i = 0; i < gen.size(); ++i) {
      ours.push_back(argmax((*ctx)->logits()));
      if (i + 1 < gen.size()) REQUIRE((*ctx)->decode(std::span<const int32_t>(&ours.back(), 1)).ok());
    }
    size_t same = 0;
    while (same < gen.size() && ours[same] == gen[same]) ++same;
    WARN(name << ": greedy tokens from our own embeddings identical to llama.cpp's for " << same << " of " << gen.size());
    CHECK(same >= (name == "448x224" ? 10u : gen.size()));
  }
}
