// Property tests on real vocabularies: for seeded random strings (ASCII,
// whitespace runs, multi-byte characters, and invalid UTF-8 bytes)
// detokenize(tokenize(s)) == s, and the streaming detokenizer produces the
// same bytes, in chunks that never split a valid character.
#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/utf8.h"
#include "support/fixtures.h"

namespace {

std::string random_text(std::mt19937& rng, bool allow_invalid) {
  static const char* const kAtoms[] = {
      "a", "e", "the", " ", "  ", "\t", "\n", "\r\n", "7", "42", "'s", "'LL", "!", "...", "(", ")", "-",
      "\xC3\xA9",                  // é
      "\xD0\xB6",                  // ж
      "\xE6\x9D\xB1",              // 東
      "\xE2\x82\xAC",              // €
      "\xF0\x9F\x9A\x80",          // 🚀
      "\xE1\x9E\x80",              // Khmer KA
      "\xEF\xBC\x81",              // fullwidth !
      "\xE3\x80\x80",              // ideographic space
  };
  static const char* const kInvalid[] = {"\xFF", "\x80", "\xC3", "\xE6\x9D", "\xED\xA0\x80", "\xC0\xAF"};
  std::uniform_int_distribution<int> len(0, 24);
  std::uniform_int_distribution<size_t> atom(0, std::size(kAtoms) - 1);
  std::uniform_int_distribution<size_t> inv(0, std::size(kInvalid) - 1);
  std::uniform_int_distribution<int> pct(0, 99);
  std::string s;
  for (int i = len(rng); i > 0; --i) s += (allow_invalid && pct(rng) < 8) ? kInvalid[inv(rng)] : kAtoms[atom(rng)];
  return s;
}

void check_round_trips(const std::string& rel, bool allow_invalid) {
  LES_REQUIRE_FIXTURE(path, rel);
  auto file = les::gguf::GgufFile::open(path, les::gguf::ReadOptions{.use_mmap = false});
  REQUIRE(file.ok());
  auto tok = les::Tokenizer::from_gguf(**file);
  INFO(tok.status().to_string());
  REQUIRE(tok.ok());
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 300; ++iter) {
    const std::string s = random_text(rng, allow_invalid);
    INFO(rel << " iteration " << iter);
    const auto ids = (*tok)->tokenize(s, true, false);
    REQUIRE(ids.ok());
    const auto back = (*tok)->detokenize(*ids);
    REQUIRE(back.ok());
    CHECK(*back == s);
    les::StreamingDetokenizer stream(**tok);
    std::string streamed;
    for (const int32_t id : *ids) {
      const auto chunk = stream.push(id);
      REQUIRE(chunk.ok());
      if (les::utf8::is_valid(s)) CHECK(les::utf8::is_valid(*chunk));
      streamed += *chunk;
    }
    streamed += stream.flush();
    CHECK(streamed == *back);
  }
}

}  // namespace

TEST_CASE("Random text round-trips through SPM vocabularies", "[tokenizer][fixtures]") {
  SECTION("trained tiny-qwen3moe") { check_round_trips("trained/tiny-qwen3moe-F16.gguf", true); }
  SECTION("llama-spm") { check_round_trips("tokenizer/ggml-vocab-llama-spm.gguf", true); }
}

TEST_CASE("Random text round-trips through byte-level BPE vocabularies", "[tokenizer][fixtures]") {
  SECTION("synthetic qwen3moe (qwen2)") { check_round_trips("synthetic/qwen3moe-F16.gguf", true); }
  SECTION("gpt-2") { check_round_trips("tokenizer/ggml-vocab-gpt-2.gguf", true); }
  // The DeepSeek vocabularies hold the symbols of the bytes that never occur
  // in valid UTF-8 (0xC0, 0xC1, 0xF5..0xFF: "À", "ÿ", ...) as USER_DEFINED
  // tokens, which decode as their text (as in llama.cpp); the others have no
  // symbol for those bytes (falcon also lacks some control bytes). So these
  // get valid UTF-8 only.
  SECTION("deepseek-llm") { check_round_trips("tokenizer/ggml-vocab-deepseek-llm.gguf", false); }
  SECTION("deepseek-coder") { check_round_trips("tokenizer/ggml-vocab-deepseek-coder.gguf", false); }
  SECTION("starcoder") { check_round_trips("tokenizer/ggml-vocab-starcoder.gguf", false); }
  SECTION("falcon") { check_round_trips("tokenizer/ggml-vocab-falcon.gguf", false); }
}
