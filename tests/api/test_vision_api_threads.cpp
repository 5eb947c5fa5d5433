// The vision C API from two threads (two contexts sharing one les_vision:
// encodes take turns, each thread gets llama.cpp's greedy tokens), and
// speculative decoding after an image: greedy output identical with and
// without a drafter (prompt lookup and a draft model, speculation forced).
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"
#include "support/vision_api.h"

namespace {

const char* const kPrompt = les::test::kVisionPrompt;
const std::vector<les_token>& kRef224 = les::test::kVisionRef224;
std::string fx(const char* rel) { return les::test::multimodal_path(rel); }
les_model* load_model(const std::string& path) { return les::test::load_model_threads(path, 1); }
using les::test::collect_tokens;
les_generate_params greedy(int32_t n) { return les::test::vision_greedy(n); }


}  // namespace

TEST_CASE("vision API: two threads, two contexts, one les_vision", "[api][vision]") {
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  les_model* m = load_model(text_path);
  REQUIRE(m != nullptr);
  les_vision_params vp = les_vision_default_params();
  vp.n_threads = 1;
  les_vision* v = nullptr;
  REQUIRE(les_vision_load(m, fx("mmproj-minicpmv4_6-tiny-F16.gguf").c_str(), &vp, &v) == LES_OK);

  std::vector<les_token> out[2];
  les_status st[2] = {LES_ERR_INTERNAL, LES_ERR_INTERNAL};
  auto run = [&](int i) {
    les_context_params cp = les_context_default_params();
    cp.n_ctx = 128;
    cp.n_threads = 1;
    les_context* ctx = nullptr;
    if ((st[i] = les_context_create(m, &cp, &ctx)) != LES_OK) return;
    for (int rep = 0; rep < 2 && st[i] == LES_OK; ++rep) {
      les_image* img = nullptr;
      if ((st[i] = les_vision_encode_file(v, fx("test-224x224.ppm").c_str(), &img)) != LES_OK) break;
      les_context_reset(ctx);
      out[i].clear();
      const les_image* one[1] = {img};
      const les_generate_params gp = greedy(16);
      st[i] = les_generate_with_images(ctx, kPrompt, one, 1, &gp, collect_tokens, &out[i]);
      les_image_free(img);
    }
    les_context_free(ctx);
  };
  std::thread t0(run, 0), t1(run, 1);
  t0.join();
  t1.join();
  for (int i = 0; i < 2; ++i) {
    INFO("thread " << i);
    CHECK(st[i] == LES_OK);
    CHECK(out[i] == kRef224);
  }
  les_vision_stats vs;
  vs.struct_size = sizeof vs;
  REQUIRE(les_vision_get_stats(v, &vs) == LES_OK);
  CHECK(vs.n_images_encoded == 4);
  les_vision_free(v);
  les_model_free(m);
}

TEST_CASE("vision API: greedy output after an image is the same with a drafter", "[api][vision][speculative]") {
  LES_REQUIRE_FIXTURE(text_path, "multimodal/qwen35moe-mm-F16.gguf");
  les_model* m = load_model(text_path);
  les_model* draft = load_model(text_path);  // same vocabulary
  REQUIRE(m != nullptr);
  REQUIRE(draft != nullptr);
  les_vision* v = nullptr;
  REQUIRE(les_vision_load(m, fx("mmproj-minicpmv4_6-tiny-F16.gguf").c_str(), nullptr, &v) == LES_OK);
  les_image* img = nullptr;
  REQUIRE(les_vision_encode_file(v, fx("test-448x224.ppm").c_str(), &img) == LES_OK);
  const les_image* one[1] = {img};
  // Text before and after the image, so prompt lookup has n-grams around it to match.
  const char* prompt =
      "<|im_start|>user\nLook: <image> and </image>.<__media__>Describe the image.<|im_end|>\n"
      "<|im_start|>assistant\n";

  auto run = [&](les_generate_params gp, les_generate_stats* stats) {
    les_context_params cp = les_context_default_params();
    cp.n_ctx = 256;
    les_context* ctx = nullptr;
    REQUIRE(les_context_create(m, &cp, &ctx) == LES_OK);
    std::vector<les_token> out;
    INFO(les_context_last_error(ctx));
    REQUIRE(les_generate_with_images(ctx, prompt, one, 1, &gp, collect_tokens, &out) == LES_OK);
    // A second turn with another image after the first answer.
    REQUIRE(les_generate_with_images(ctx, "<__media__>Again.", one, 1, &gp, collect_tokens, &out) == LES_OK);
    stats->struct_size = sizeof *stats;
    REQUIRE(les_context_generate_stats(ctx, stats) == LES_OK);
    les_context_free(ctx);
    return out;
  };
  les_generate_stats plain_stats, lookup_stats, draft_stats;
  const std::vector<les_token> plain = run(greedy(24), &plain_stats);
  REQUIRE(plain.size() == 48);
  les_generate_params gp = greedy(24);
  gp.lookup_ngram = 2;
  gp.draft_min = 2;
  CHECK(run(gp, &lookup_stats) == plain);
  gp = greedy(24);
  gp.draft_model = draft;
  gp.draft_min = 2;
  CHECK(run(gp, &draft_stats) == plain);
  CHECK(draft_stats.n_draft_verified > 0);  // the draft model drafted after the image
  WARN("after an image: lookup drafted " << lookup_stats.n_drafted << ", draft model accepted "
                                         << draft_stats.n_draft_accepted << " of " << draft_stats.n_draft_verified);
  les_image_free(img);
  les_vision_free(v);
  les_model_free(draft);
  les_model_free(m);
}
