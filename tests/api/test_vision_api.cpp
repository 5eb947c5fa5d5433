// Image input through the C ABI (les_vision.h) on the multimodal fixtures
// (../shared/fixtures/multimodal: a tiny random MiniCPM-V 4.6 mmproj, the
// qwen35moe text model with the image marker tokens, llama.cpp's references):
// the greedy tokens of llama-mtmd-cli's prompt through les_generate_with_images
// and through les_context_append_image, encode_rgb == encode_file ==
// encode_memory, the statistics, release_after_encode (weights unmapped, the
// same logits after the reload), the memory plan's vision share, and bad
// input refused with a status and a message naming the problem while the
// context stays usable.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"
#include "support/vision_api.h"

namespace {

const char* const kPrompt224 = les::test::kVisionPrompt;
const std::vector<les_token>& kRef224 = les::test::kVisionRef224;
const std::vector<les_token>& kRef448 = les::test::kVisionRef448;
std::string fx(const char* rel) { return les::test::multimodal_path(rel); }
les_model* load_model(const std::string& path) { return les::test::load_model_threads(path, 2); }
les_context* make_context(les_model* m, int32_t n_ctx = 256) { return les::test::make_vision_context(m, n_ctx); }
les_vision* load_vision(les_model* m, bool release = false) { return les::test::load_fixture_vision(m, release); }
using les::test::collect_tokens;
les_generate_params greedy(int32_t n) { return les::test::vision_greedy(n); }


// Greedy tokens of `prompt` with one image.
std::vector<les_token> generate_one(les_context* ctx, const char* prompt, const les_image* img,
                                    les_generate_params gp) {
  std::vector<les_token> out;
  const les_image* imgs[1] = {img};
  const les_status st = les_generate_with_images(ctx, prompt, imgs, 1, &gp, collect_tokens, &out);
  INFO(les_context_last_error(ctx));
  REQUIRE(st == LES_OK);
  return out;
}

// A binary PPM (P6, maxval 255, no comments) as RGB8 bytes.
std::vector<uint8_t> read_ppm(const std::string& path, int32_t& w, int32_t& h) {
  std::ifstream f(path, std::ios::binary);
  std::string magic;
  int maxval = 0;
  f >> magic >> w >> h >> maxval;
  f.get();
  REQUIRE(magic == "P6");
  REQUIRE(maxval == 255);
  std::vector<uint8_t> px(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  f.read(reinterpret_cast<char*>(px.data()), static_cast<std::streamsize>(px.size()));
  REQUIRE(f.good());
  return px;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The logits after appending `img` to a fresh context (a bit-exact summary of its embeddings).
std::vector<float> logits_after(les_model* m, const les_image* img) {
  les_context* c = make_context(m);
  REQUIRE(c != nullptr);
  REQUIRE(les_context_append_image(c, img) == LES_OK);
  const float* l = les_context_logits(c);
  REQUIRE(l != nullptr);
  std::vector<float> out(l, l + les_model_n_vocab(m));
  les_context_free(c);
  return out;
}

}  // namespace

TEST_CASE("vision API: llama-mtmd-cli's greedy tokens for both fixture images", "[api][vision]") {
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  les_model* m = load_model(text_path);
  REQUIRE(m != nullptr);
  les_vision* v = load_vision(m);
  INFO(les_last_error());
  REQUIRE(v != nullptr);

  les_image* img = nullptr;
  REQUIRE(les_vision_encode_file(v, fx("test-224x224.ppm").c_str(), &img) == LES_OK);
  CHECK(les_image_n_tokens(img) == 16 + 2);  // overview + <image> </image>

  SECTION("les_generate_with_images") {
    les_context* ctx = make_context(m);
    REQUIRE(ctx != nullptr);
    CHECK(generate_one(ctx, kPrompt224, img, greedy(16)) == kRef224);
    les_generate_stats gs;
    gs.struct_size = sizeof gs;
    REQUIRE(les_context_generate_stats(ctx, &gs) == LES_OK);
    CHECK(gs.n_prompt_tokens == 36);  // the reference prompt's positions
    CHECK(gs.n_generated == 16);
    les_context_free(ctx);
  }
  SECTION("les_context_append_image between two text parts") {
    les_context* ctx = make_context(m);
    REQUIRE(ctx != nullptr);
    les_generate_params gp = greedy(0);
    REQUIRE(les_generate(ctx, "<|im_start|>user\n", &gp, nullptr, nullptr) == LES_OK);
    REQUIRE(les_context_append_image(ctx, img) == LES_OK);
    CHECK(les_context_n_past(ctx) == 4 + 18);
    std::vector<les_token> out;
    gp = greedy(16);
    REQUIRE(les_generate(ctx, "Describe the image.<|im_end|>\n<|im_start|>assistant\n", &gp, collect_tokens, &out) == LES_OK);
    CHECK(out == kRef224);
    // -1 marks the embedding rows in the session's tokens.
    std::vector<les_token> held(64);
    int32_t n = 0;
    REQUIRE(les_context_tokens(ctx, held.data(), 64, &n) == LES_OK);
    CHECK(held[4] == 4096);  // <image>
    CHECK(held[5] == -1);
    CHECK(held[20] == -1);
    CHECK(held[21] == 4097);  // </image>
    les_context_free(ctx);
  }
  SECTION("the 448x224 image: overview and 2 slices") {
    les_image* wide = nullptr;
    REQUIRE(les_vision_encode_file(v, fx("test-448x224.ppm").c_str(), &wide) == LES_OK);
    CHECK(les_image_n_tokens(wide) == 50 + 6);
    les_context* ctx = make_context(m);
    REQUIRE(ctx != nullptr);
    const std::vector<les_token> out = generate_one(ctx, kPrompt224, wide, greedy(16));
    size_t same = 0;
    while (same < out.size() && out[same] == kRef448[same]) ++same;
    WARN("448x224: greedy tokens identical to llama.cpp's for " << same << " of 16 (step 10 is a near tie)");
    CHECK(same >= 10);
    les_context_free(ctx);
    les_image_free(wide);
  }
  SECTION("statistics") {
    les_vision_stats vs;
    vs.struct_size = sizeof vs;
    REQUIRE(les_vision_get_stats(v, &vs) == LES_OK);
    CHECK(vs.n_images_encoded == 1);
    CHECK(vs.n_chunks_encoded == 1);
    CHECK(vs.n_image_tokens == 16);
    CHECK(vs.last_encode_ms > 0.0);
    CHECK(vs.encode_ms_total >= vs.last_encode_ms);
    CHECK(vs.weight_bytes > 1000000);  // the fixture's F16 weights: ~1.4 MiB
    CHECK(vs.weight_bytes < 1471520);  // less than the file
    CHECK(vs.weight_bytes_resident == vs.weight_bytes);
    CHECK(vs.n_weight_loads == 1);
    CHECK(vs.memory_bytes > vs.weight_bytes);
    les_vision_stats small;  // a caller's shorter struct gets its fields only
    small.struct_size = 4;
    CHECK(les_vision_get_stats(v, &small) == LES_ERR_INVALID_ARGUMENT);
    CHECK(std::string(les_last_error()).find("les_vision_stats.struct_size") != std::string::npos);
  }
  SECTION("RGB8 bytes, a file and encoded bytes in memory give the same embeddings") {
    int32_t w = 0, h = 0;
    const std::vector<uint8_t> px = read_ppm(fx("test-224x224.ppm"), w, h);
    les_image* from_rgb = nullptr;
    REQUIRE(les_vision_encode_rgb(v, px.data(), w, h, &from_rgb) == LES_OK);
    const std::vector<uint8_t> file = read_bytes(fx("test-224x224.ppm"));
    les_image* from_mem = nullptr;
    REQUIRE(les_vision_encode_memory(v, file.data(), file.size(), &from_mem) == LES_OK);
    const std::vector<float> want = logits_after(m, img);
    CHECK(logits_after(m, from_rgb) == want);
    CHECK(logits_after(m, from_mem) == want);
    les_image_free(from_rgb);
    les_image_free(from_mem);
  }
  les_image_free(img);
  les_vision_free(v);
  les_model_free(m);
}

TEST_CASE("vision API: release_after_encode unmaps the weights, the next encode maps them again",
          "[api][vision]") {
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  les_model* m = load_model(text_path);
  REQUIRE(m != nullptr);
  les_vision* keep = load_vision(m, false);
  les_vision* rel = load_vision(m, true);
  REQUIRE(keep != nullptr);
  REQUIRE(rel != nullptr);
  les_vision_stats vs;
  vs.struct_size = sizeof vs;
  REQUIRE(les_vision_get_stats(rel, &vs) == LES_OK);
  CHECK(vs.weight_bytes > 0);
  CHECK(vs.weight_bytes_resident == 0);  // validated at load, then released
  les_image *a = nullptr, *b = nullptr, *c = nullptr;
  REQUIRE(les_vision_encode_file(keep, fx("test-224x224.ppm").c_str(), &a) == LES_OK);
  REQUIRE(les_vision_encode_file(rel, fx("test-224x224.ppm").c_str(), &b) == LES_OK);
  REQUIRE(les_vision_get_stats(rel, &vs) == LES_OK);
  CHECK(vs.weight_bytes_resident == 0);
  CHECK(vs.n_weight_loads == 2);
  REQUIRE(les_vision_encode_file(rel, fx("test-224x224.ppm").c_str(), &c) == LES_OK);
  REQUIRE(les_vision_get_stats(rel, &vs) == LES_OK);
  CHECK(vs.weight_bytes_resident == 0);
  CHECK(vs.n_weight_loads == 3);
  CHECK(vs.n_images_encoded == 2);
  const std::vector<float> want = logits_after(m, a);
  CHECK(logits_after(m, b) == want);
  CHECK(logits_after(m, c) == want);
  les_image_free(a);
  les_image_free(b);
  les_image_free(c);
  les_vision_free(keep);
  les_vision_free(rel);
  les_model_free(m);
}

TEST_CASE("vision API: a memory limit counts the encoder", "[api][vision]") {
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  les_model* m = load_model(text_path);
  REQUIRE(m != nullptr);
  les_vision* v = load_vision(m, true);
  REQUIRE(v != nullptr);
  les_vision_stats vs;
  vs.struct_size = sizeof vs;
  REQUIRE(les_vision_get_stats(v, &vs) == LES_OK);
  les_context_params cp = les_context_default_params();
  cp.n_ctx = 256;
  cp.memory_limit_bytes = uint64_t{4} << 30;
  cp.vision = v;
  les_context* ctx = nullptr;
  INFO(les_last_error());
  REQUIRE(les_context_create(m, &cp, &ctx) == LES_OK);
  les_memory_plan mp;
  mp.struct_size = sizeof mp;
  REQUIRE(les_context_memory_plan(ctx, &mp) == LES_OK);
  CHECK(mp.vision_bytes == vs.memory_bytes);
  les_context_free(ctx);
  // A limit that cannot hold the encoder names it.
  cp.memory_limit_bytes = mp.baseline_bytes + mp.dense_bytes + mp.kv_bytes + mp.scratch_bytes + mp.vision_bytes / 2;
  CHECK(les_context_create(m, &cp, &ctx) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("vision encoder") != std::string::npos);
  les_vision_free(v);
  les_model_free(m);
}
