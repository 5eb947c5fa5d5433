// Shared pieces of the vision C API tests (tests/api/test_vision_api*.cpp):
// fixture paths under multimodal/, loading the text model, a context and the
// tiny MiniCPM-V 4.6 mmproj through les.h, llama-mtmd-cli's prompt and its
// greedy tokens for the two fixture images (fixtures/multimodal/README.md,
// "Results"), and a token-collecting callback.
//
// Thread-safety: the helpers only call les.h functions on the objects they
// are given; kRef* are constants.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"

namespace les::test {

// llama-mtmd-cli's chat prompt with one image (its media marker).
inline constexpr const char* kVisionPrompt =
    "<|im_start|>user\n<__media__>Describe the image.<|im_end|>\n<|im_start|>assistant\n";

// llama.cpp's 16 greedy tokens for test-224x224.ppm and test-448x224.ppm.
inline const std::vector<les_token> kVisionRef224 = {1133, 81,   278,  1901, 2625, 2993, 3536, 2170,
                                                     3590, 3114, 3976, 3923, 3323, 78,   209,  953};
inline const std::vector<les_token> kVisionRef448 = {2783, 295, 4023, 956, 3247, 3438, 680,  3702,
                                                     1004, 1161, 54,  144, 2746, 292,  2920, 606};

// fixtures/multimodal/<rel>.
inline std::string multimodal_path(const char* rel) { return fixture_path(std::string("multimodal/") + rel); }

// The model at `path` with `n_threads` threads, or nullptr when it does not load.
inline les_model* load_model_threads(const std::string& path, int32_t n_threads) {
  les_model_params mp = les_model_default_params();
  mp.n_threads = n_threads;
  les_model* m = nullptr;
  if (les_model_load(path.c_str(), &mp, &m) != LES_OK) return nullptr;
  return m;
}

// A context of `n_ctx` positions on `m`, or nullptr.
inline les_context* make_vision_context(les_model* m, int32_t n_ctx = 256) {
  les_context_params cp = les_context_default_params();
  cp.n_ctx = n_ctx;
  les_context* c = nullptr;
  if (les_context_create(m, &cp, &c) != LES_OK) return nullptr;
  return c;
}

// The fixture mmproj bound to `m` (2 threads), or nullptr.
inline les_vision* load_fixture_vision(les_model* m, bool release_after_encode = false) {
  les_vision_params vp = les_vision_default_params();
  vp.n_threads = 2;
  vp.release_after_encode = release_after_encode;
  les_vision* v = nullptr;
  if (les_vision_load(m, multimodal_path("mmproj-minicpmv4_6-tiny-F16.gguf").c_str(), &vp, &v) != LES_OK)
    return nullptr;
  return v;
}

// les_token_callback appending each token to the std::vector<les_token> at `ud`.
inline bool collect_tokens(les_token tok, const char*, size_t, void* ud) {
  static_cast<std::vector<les_token>*>(ud)->push_back(tok);
  return true;
}

// Greedy parameters for the vision prompts: n tokens, EOS ignored, special
// tokens in the prompt text parsed (the chat markers).
inline les_generate_params vision_greedy(int32_t n) {
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = n;
  gp.sampler.temperature = 0.0f;
  gp.parse_special = true;
  gp.ignore_eos = true;
  return gp;
}

}  // namespace les::test
