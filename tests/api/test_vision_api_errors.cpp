// Bad input to the vision C API (les_vision.h) is refused with a status and a
// message naming the problem, never a crash, and a context that saw the
// refusal still generates: NULL pointers, bad params, a corrupt / truncated /
// empty / missing image file, zero and absurd sizes, an mmproj of another
// projector type or output width, a text model without the image marker
// tokens, an image encoded for another model, a full context, marker counts
// that differ from the images, mtp drafting after images.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "synth/synth_model.h"
#include "les/les.h"
#include "support/fixtures.h"
#include "support/vision_api.h"
#include "support/gguf_copy.h"

namespace {

std::string fx(const char* rel) { return les::test::multimodal_path(rel); }
les_model* load_model(const std::string& path) { return les::test::load_model_threads(path, 2); }
les_context* make_context(les_model* m, int32_t n_ctx = 256) { return les::test::make_vision_context(m, n_ctx); }
les_vision* load_vision(les_model* m, bool release = false) { return les::test::load_fixture_vision(m, release); }

bool has(const char* msg, const std::string& words) { return std::string(msg).find(words) != std::string::npos; }

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The context still works: a greedy token after a short prompt.
void check_usable(les_context* ctx) {
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 2;
  gp.sampler.temperature = 0.0f;
  INFO(les_context_last_error(ctx));
  CHECK(les_generate(ctx, " the", &gp, nullptr, nullptr) == LES_OK);
}

}  // namespace

TEST_CASE("vision API: bad loads are refused by name", "[api][vision]") {
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  LES_REQUIRE_FIXTURE(mmproj, "multimodal/mmproj-minicpmv4_6-tiny-F16.gguf");
  les_model* m = load_model(text_path);
  REQUIRE(m != nullptr);
  les_vision* v = reinterpret_cast<les_vision*>(0x1);  // must be set to NULL on failure

  CHECK(les_vision_load(nullptr, mmproj.c_str(), nullptr, &v) == LES_ERR_INVALID_ARGUMENT);
  CHECK(v == nullptr);
  CHECK(has(les_last_error(), "model is NULL"));
  CHECK(les_vision_load(m, nullptr, nullptr, &v) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_last_error(), "mmproj_path is NULL"));
  CHECK(les_vision_load(m, mmproj.c_str(), nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  les_vision_params vp = les_vision_default_params();
  vp.struct_size = 3;
  CHECK(les_vision_load(m, mmproj.c_str(), &vp, &v) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_last_error(), "les_vision_params.struct_size"));
  vp = les_vision_default_params();
  vp.n_threads = -1;
  CHECK(les_vision_load(m, mmproj.c_str(), &vp, &v) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_last_error(), "n_threads"));
  CHECK(has(les_last_error(), "0 = the model's n_threads"));

  SECTION("a missing file and a text GGUF as mmproj") {
    CHECK(les_vision_load(m, (les::test::temp_dir() + "/none.gguf").c_str(), nullptr, &v) == LES_ERR_IO);
    CHECK(has(les_last_error(), "none.gguf"));
    CHECK(les_vision_load(m, text_path.c_str(), nullptr, &v) == LES_ERR_FORMAT);
    CHECK(has(les_last_error(), "not an mmproj"));
  }
  SECTION("another projector type") {
    const std::string dst = les::test::temp_dir() + "/mmproj-resampler.gguf";
    les::test::copy_gguf_with_strings(mmproj, dst, {{"clip.projector_type", "resampler"}});
    CHECK(les_vision_load(m, dst.c_str(), nullptr, &v) == LES_ERR_UNSUPPORTED);
    CHECK(has(les_last_error(), "'resampler'"));
    CHECK(has(les_last_error(), "minicpmv4_6"));
    CHECK(v == nullptr);
  }
  SECTION("an mmproj for another width") {
    auto preset = les::synth_preset("tiny");
    REQUIRE(preset.ok());
    preset->n_embd = 128;  // the fixture mmproj gives 256
    const std::string path = les::test::temp_dir() + "/tiny-128.gguf";
    REQUIRE(les::write_synth_model(*preset, les::SynthOptions{}, path).ok());
    les_model* narrow = load_model(path);
    REQUIRE(narrow != nullptr);
    CHECK(les_vision_load(narrow, mmproj.c_str(), nullptr, &v) == LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_last_error(), "width 256"));
    CHECK(has(les_last_error(), "n_embd is 128"));
    les_model_free(narrow);
  }
  SECTION("a text model without the image marker tokens") {
    LES_REQUIRE_FIXTURE(plain, "synthetic/qwen35moe-F16.gguf");
    les_model* p = load_model(plain);
    REQUIRE(p != nullptr);
    CHECK(les_vision_load(p, mmproj.c_str(), nullptr, &v) == LES_ERR_UNSUPPORTED);
    CHECK(has(les_last_error(), "<image>"));
    CHECK(has(les_last_error(), "</slice>"));
    les_model_free(p);
  }
  les_model_free(m);
}

TEST_CASE("vision API: bad images are refused by name", "[api][vision]") {
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  les_model* m = load_model(text_path);
  REQUIRE(m != nullptr);
  les_vision* v = load_vision(m);
  REQUIRE(v != nullptr);
  les_image* img = reinterpret_cast<les_image*>(0x1);
  const std::vector<uint8_t> px(224 * 224 * 3, 100);

  CHECK(les_vision_encode_rgb(nullptr, px.data(), 224, 224, &img) == LES_ERR_INVALID_ARGUMENT);
  CHECK(img == nullptr);
  CHECK(has(les_last_error(), "vision is NULL"));
  CHECK(les_vision_encode_rgb(v, nullptr, 224, 224, &img) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_last_error(), "rgb is NULL"));
  CHECK(les_vision_encode_rgb(v, px.data(), 224, 224, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_vision_encode_rgb(v, px.data(), 0, 224, &img) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_last_error(), "zero-size"));
  CHECK(les_vision_encode_rgb(v, px.data(), 224, -5, &img) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_last_error(), "zero-size"));
  // Far above the pixel bound: refused before the size of `rgb` matters.
  CHECK(les_vision_encode_rgb(v, px.data(), 100000, 100000, &img) == LES_ERR_INVALID_ARGUMENT);
  CHECK(img == nullptr);
  CHECK(les_vision_encode_file(v, nullptr, &img) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_vision_encode_file(nullptr, fx("test-224x224.ppm").c_str(), &img) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_vision_encode_memory(v, nullptr, 10, &img) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_vision_encode_memory(v, px.data(), 0, &img) == LES_ERR_INVALID_ARGUMENT);

  const std::string dir = les::test::temp_dir();
  CHECK(les_vision_encode_file(v, (dir + "/missing.png").c_str(), &img) == LES_ERR_IO);
  CHECK(has(les_last_error(), "missing.png"));
  write_file(dir + "/corrupt.png", {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(les_vision_encode_file(v, (dir + "/corrupt.png").c_str(), &img) == LES_ERR_FORMAT);
  CHECK(has(les_last_error(), "corrupt.png"));
  write_file(dir + "/text.jpg", {'h', 'e', 'l', 'l', 'o'});
  CHECK(les_vision_encode_file(v, (dir + "/text.jpg").c_str(), &img) == LES_ERR_FORMAT);
  write_file(dir + "/empty.ppm", {});
  CHECK(les_vision_encode_file(v, (dir + "/empty.ppm").c_str(), &img) != LES_OK);
  CHECK(has(les_last_error(), "empty"));
  const std::string zero = "P6\n0 0\n255\n";
  write_file(dir + "/zero.ppm", std::vector<uint8_t>(zero.begin(), zero.end()));
  CHECK(les_vision_encode_file(v, (dir + "/zero.ppm").c_str(), &img) != LES_OK);
  std::ifstream f(fx("test-224x224.ppm"), std::ios::binary);
  std::vector<uint8_t> ppm((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ppm.resize(ppm.size() / 2);  // truncated pixel data
  CHECK(les_vision_encode_memory(v, ppm.data(), ppm.size(), &img) == LES_ERR_FORMAT);
  CHECK(img == nullptr);

  CHECK(les_image_n_tokens(nullptr) == 0);
  les_image_free(nullptr);
  les_vision_free(nullptr);
  les_vision_stats vs;
  vs.struct_size = sizeof vs;
  CHECK(les_vision_get_stats(nullptr, &vs) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_vision_get_stats(v, nullptr) == LES_ERR_INVALID_ARGUMENT);
  REQUIRE(les_vision_get_stats(v, &vs) == LES_OK);
  CHECK(vs.n_images_encoded == 0);
  les_vision_free(v);
  les_model_free(m);
}

TEST_CASE("vision API: images into contexts, refusals leave the context usable", "[api][vision]") {
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  les_model* m = load_model(text_path);
  REQUIRE(m != nullptr);
  les_vision* v = load_vision(m);
  REQUIRE(v != nullptr);
  les_image* img = nullptr;
  REQUIRE(les_vision_encode_file(v, fx("test-224x224.ppm").c_str(), &img) == LES_OK);
  const les_image* one[1] = {img};
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 2;
  gp.sampler.temperature = 0.0f;

  SECTION("NULL arguments") {
    les_context* ctx = make_context(m);
    REQUIRE(ctx != nullptr);
    CHECK(les_context_append_image(nullptr, img) == LES_ERR_INVALID_ARGUMENT);
    CHECK(les_context_append_image(ctx, nullptr) == LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_context_last_error(ctx), "image is NULL"));
    CHECK(les_generate_with_images(nullptr, "<__media__>", one, 1, &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
    CHECK(les_generate_with_images(ctx, nullptr, one, 1, &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_context_last_error(ctx), "prompt is NULL"));
    CHECK(les_generate_with_images(ctx, "<__media__>", nullptr, 1, &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_context_last_error(ctx), "images is NULL"));
    const les_image* holes[2] = {img, nullptr};
    CHECK(les_generate_with_images(ctx, "<__media__><__media__>", holes, 2, &gp, nullptr, nullptr) ==
          LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_context_last_error(ctx), "images[1] is NULL"));
    CHECK(les_generate_with_images(ctx, "x", one, -1, &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
    CHECK(les_context_n_past(ctx) == 0);
    check_usable(ctx);
    les_context_free(ctx);
  }
  SECTION("markers and images that do not match") {
    les_context* ctx = make_context(m);
    REQUIRE(ctx != nullptr);
    CHECK(les_generate_with_images(ctx, "no marker here", one, 1, &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_context_last_error(ctx), "0 media markers (\"<__media__>\") for 1 image"));
    CHECK(les_generate_with_images(ctx, "<__media__> and <__media__>", one, 1, &gp, nullptr, nullptr) ==
          LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_context_last_error(ctx), "2 media markers"));
    CHECK(les_context_n_past(ctx) == 0);
    // No image and no marker: as les_generate.
    CHECK(les_generate_with_images(ctx, "Once upon", nullptr, 0, &gp, nullptr, nullptr) == LES_OK);
    les_context_free(ctx);
  }
  SECTION("an image of another model's vision") {
    les_model* other = load_model(text_path);  // the same file, another les_model
    REQUIRE(other != nullptr);
    les_vision* ov = load_vision(other);
    REQUIRE(ov != nullptr);
    les_image* foreign = nullptr;
    REQUIRE(les_vision_encode_file(ov, fx("test-224x224.ppm").c_str(), &foreign) == LES_OK);
    les_context* ctx = make_context(m);
    REQUIRE(ctx != nullptr);
    CHECK(les_context_append_image(ctx, foreign) == LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_context_last_error(ctx), "another les_model"));
    const les_image* f1[1] = {foreign};
    CHECK(les_generate_with_images(ctx, "<__media__>", f1, 1, &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
    CHECK(has(les_context_last_error(ctx), "images[0] was encoded by a les_vision of another les_model"));
    CHECK(les_context_n_past(ctx) == 0);
    check_usable(ctx);
    // The model is freed: its images are still refused (no use after free).
    les_vision_free(ov);
    les_model_free(other);
    CHECK(les_context_append_image(ctx, foreign) == LES_ERR_INVALID_ARGUMENT);
    les_image_free(foreign);
    les_context_free(ctx);
  }
  SECTION("a full context") {
    les_context* ctx = make_context(m, 24);
    REQUIRE(ctx != nullptr);
    REQUIRE(les_generate(ctx, "<|im_start|>user\nhello there", &gp, nullptr, nullptr) == LES_OK);
    const int32_t n_past = les_context_n_past(ctx);
    CHECK(les_context_append_image(ctx, img) == LES_ERR_CONTEXT_FULL);
    CHECK(has(les_context_last_error(ctx), "the image takes 18 positions"));
    CHECK(les_generate_with_images(ctx, "<__media__>", one, 1, &gp, nullptr, nullptr) == LES_ERR_CONTEXT_FULL);
    CHECK(has(les_context_last_error(ctx), "takes 18 positions"));
    CHECK(les_context_n_past(ctx) == n_past);
    gp.n_predict = 1;
    CHECK(les_generate(ctx, "", &gp, nullptr, nullptr) == LES_OK);  // continues from the pending token
    les_context_reset(ctx);
    CHECK(les_context_append_image(ctx, img) == LES_OK);
    les_context_free(ctx);
  }
  SECTION("mtp drafting after images is refused, other drafters are fine") {
    les_context* ctx = make_context(m);
    REQUIRE(ctx != nullptr);
    gp.mtp = true;
    CHECK(les_generate_with_images(ctx, "<__media__>Hi", one, 1, &gp, nullptr, nullptr) == LES_ERR_UNSUPPORTED);
    CHECK(has(les_context_last_error(ctx), "image"));
    CHECK(les_context_n_past(ctx) == 0);
    REQUIRE(les_context_append_image(ctx, img) == LES_OK);
    CHECK(les_generate(ctx, "Hi", &gp, nullptr, nullptr) == LES_ERR_UNSUPPORTED);
    CHECK(has(les_context_last_error(ctx), "image positions"));
    gp.mtp = false;
    gp.lookup_ngram = 2;
    CHECK(les_generate(ctx, "Hi", &gp, nullptr, nullptr) == LES_OK);
    les_context_free(ctx);
  }
  les_image_free(img);
  les_vision_free(v);
  les_model_free(m);
}
