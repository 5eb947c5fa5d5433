// A prompt with NUL bytes through the C ABI (issue 36, defect 7):
// les_generate_params.prompt_text / prompt_text_len carry the prompt's bytes
// with their length, so a NUL byte is text like any other (a C string stops
// there: `les run -f` evaluated 2 of a file's 9 tokens). The text is tokenized
// exactly as les_tokenize() tokenizes the same bytes, in les_generate and in
// les_generate_with_images; mixing it with `prompt` or prompt_tokens is refused.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "les/les.h"
#include "support/c_api_loaded.h"
#include "support/fixtures.h"
#include "support/greedy_params.h"

namespace {

using les::test::Loaded;

bool collect(les_token, const char* piece, size_t len, void* ud) {
  static_cast<std::string*>(ud)->append(piece, len);
  return true;
}

std::vector<les_token> tokenize(les_model* m, const std::string& text) {
  std::vector<les_token> ids(text.size() + 8);
  int32_t n = 0;
  REQUIRE(les_tokenize(m, text.data(), text.size(), true, false, ids.data(), static_cast<int32_t>(ids.size()), &n) ==
          LES_OK);
  ids.resize(static_cast<size_t>(n));
  return ids;
}

std::vector<les_token> held(les_context* ctx) {
  std::vector<les_token> ids(1024);
  int32_t n = 0;
  REQUIRE(les_context_tokens(ctx, ids.data(), static_cast<int32_t>(ids.size()), &n) == LES_OK);
  ids.resize(static_cast<size_t>(n));
  return ids;
}

}  // namespace

TEST_CASE("Prompt text: NUL bytes reach the tokenizer with prompt_text", "[api][nul]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string text = std::string("It is a truth") + '\0' + "universally acknowledged" + '\0' + "that";
  Loaded a, b;
  REQUIRE(les::test::load(path, a, 256));
  REQUIRE(les::test::load(path, b, 256));
  const std::vector<les_token> ids = tokenize(a.model, text);
  REQUIRE(ids.size() > tokenize(a.model, "It is a truth").size() + 2);  // the NULs did not end it

  les_generate_params gp = les::test::greedy_params(6);
  gp.prompt_text = text.data();
  gp.prompt_text_len = text.size();
  std::string out_text;
  REQUIRE(les_generate(a.ctx, nullptr, &gp, collect, &out_text) == LES_OK);
  les_generate_stats s{};
  s.struct_size = sizeof s;
  REQUIRE(les_context_generate_stats(a.ctx, &s) == LES_OK);
  CHECK(s.n_prompt_tokens == static_cast<int32_t>(ids.size()));
  // The same as the ids les_tokenize gives for those bytes.
  les_generate_params gi = les::test::greedy_params(6);
  gi.prompt_tokens = ids.data();
  gi.n_prompt_tokens = static_cast<int32_t>(ids.size());
  std::string out_ids;
  REQUIRE(les_generate(b.ctx, nullptr, &gi, collect, &out_ids) == LES_OK);
  CHECK(out_text == out_ids);
  CHECK(held(a.ctx) == held(b.ctx));

  // les_generate_with_images (no images here) reads it too.
  REQUIRE(les_context_reset(a.ctx) == LES_OK);
  std::string out_images;
  REQUIRE(les_generate_with_images(a.ctx, nullptr, nullptr, 0, &gp, collect, &out_images) == LES_OK);
  CHECK(out_images == out_ids);
  CHECK(held(a.ctx) == held(b.ctx));
}

TEST_CASE("Prompt text: prompt_text with prompt or prompt_tokens is refused; older callers never read it",
          "[api][nul]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  Loaded l;
  REQUIRE(les::test::load(path, l, 256));
  const std::string text = "hello";
  les_generate_params gp = les::test::greedy_params(2);
  gp.prompt_text = text.data();
  gp.prompt_text_len = text.size();
  CHECK(les_generate(l.ctx, "x", &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(l.ctx)).find("prompt_text") != std::string::npos);
  const les_token one = 1;
  gp.prompt_tokens = &one;
  gp.n_prompt_tokens = 1;
  CHECK(les_generate(l.ctx, nullptr, &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_n_past(l.ctx) == 0);
  // "" counts as no prompt, as with prompt_tokens.
  gp.prompt_tokens = nullptr;
  gp.n_prompt_tokens = 0;
  CHECK(les_generate(l.ctx, "", &gp, nullptr, nullptr) == LES_OK);
  // A caller built before prompt_text: the bytes past its struct are not read, `prompt` is the prompt.
  REQUIRE(les_context_reset(l.ctx) == LES_OK);
  les_generate_params old = les::test::greedy_params(2);
  old.prompt_text = "never read";
  old.prompt_text_len = 10;
  old.struct_size = static_cast<uint32_t>(offsetof(les_generate_params, abort_callback));
  CHECK(les_generate(l.ctx, "hello", &old, nullptr, nullptr) == LES_OK);
  les_generate_stats s{};
  s.struct_size = sizeof s;
  REQUIRE(les_context_generate_stats(l.ctx, &s) == LES_OK);
  CHECK(s.n_prompt_tokens == static_cast<int32_t>(tokenize(l.model, "hello").size()));
}
