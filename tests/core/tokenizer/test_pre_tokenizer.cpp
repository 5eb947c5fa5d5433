// Pre-tokenizer splits on hand-worked examples, derived by applying each
// pattern's definition (pre_tokenizer.h) step by step. llama3 has no vocabulary
// fixture, so these are its only test; the others are also covered end to end
// by test_tokenizer_fixtures.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/tokenizer/pre_tokenizer.h"

namespace {
std::vector<std::string> split(const char* name, std::string_view text) {
  auto p = les::PreTokenizer::create(name);
  INFO(p.status().to_string());
  REQUIRE(p.ok());
  std::vector<std::string> out;
  for (const auto piece : p->split(text)) out.emplace_back(piece);
  return out;
}
using V = std::vector<std::string>;
}  // namespace

TEST_CASE("gpt2: contractions, letters, numbers, symbols, whitespace", "[pre_tokenizer]") {
  // "  123": the whitespace run gives its last space to " 123".
  CHECK(split("gpt2", "Hello world's  123!!\n") == V{"Hello", " world", "'s", " ", " 123", "!!", "\n"});
  // Contractions are case-sensitive in gpt2.
  CHECK(split("gpt2", "I'VE") == V{"I", "'", "VE"});
  CHECK(split("gpt2", "") == V{});
}

TEST_CASE("llama3: case-insensitive contractions, 3-digit groups, newlines", "[pre_tokenizer]") {
  CHECK(split("llama3", "Hello world123456 's\n\n  x") ==
        V{"Hello", " world", "123", "456", " '", "s", "\n\n", " ", " x"});
  CHECK(split("llama3", "I'VE") == V{"I", "'VE"});
  // A punctuation char is the optional prefix of a letter run.
  CHECK(split("llama-bpe", "(abc)") == V{"(abc", ")"});
  auto p = les::PreTokenizer::create("llama3");
  REQUIRE(p.ok());
  CHECK(p->ignore_merges());
}

TEST_CASE("qwen2: single digits", "[pre_tokenizer]") {
  CHECK(split("qwen2", "abc 2024") == V{"abc", " ", "2", "0", "2", "4"});
}

TEST_CASE("sequenced stages: deepseek-coder, falcon, deepseek-llm, starcoder", "[pre_tokenizer]") {
  CHECK(split("deepseek-coder", "foo(1) 23\n") == V{"foo", "(", "1", ")", " ", "2", "3", "\n"});
  CHECK(split("falcon", "a+=1234") == V{"a", "+=", "123", "4"});
  CHECK(split("deepseek-llm", "Hi \xE6\x9D\xB1\xE4\xBA\xAC x  ") ==
        V{"Hi", " ", "\xE6\x9D\xB1\xE4\xBA\xAC", " x", "  "});
  CHECK(split("starcoder", "x 42") == V{"x", " ", "4", "2"});
}

TEST_CASE("invalid UTF-8 bytes are kept as 'other' characters", "[pre_tokenizer]") {
  CHECK(split("gpt2", "a\xFF" "b") == V{"a", "\xFF", "b"});
  CHECK(split("qwen2", "\xE6\x9D") == V{"\xE6\x9D"});
}

TEST_CASE("unknown pre-tokenizer names are refused", "[pre_tokenizer]") {
  const auto p = les::PreTokenizer::create("chatglm-bpe");
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == les::StatusCode::unsupported);
  CHECK_THAT(p.status().message(), Catch::Contains("'chatglm-bpe'") && Catch::Contains("qwen2"));
}
