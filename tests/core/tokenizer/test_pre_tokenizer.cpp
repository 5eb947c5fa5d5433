// Pre-tokenizer splits on hand-worked examples, derived by applying each
// pattern's definition (pre_tokenizer.h, pre_tokenizer_custom.h,
// pre_tokenizer_names.cpp) step by step. Every name is also checked end to end
// against llama-tokenize by test_pre_tokenizer_llama.
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
  CHECK(split("gpt-2", "Hello world's  123!!\n") == V{"Hello", " world", "'s", " ", " 123", "!!", "\n"});
  // Contractions are case-sensitive in gpt2.
  CHECK(split("gpt-2", "I'VE") == V{"I", "'", "VE"});
  CHECK(split("gpt-2", "") == V{});
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
  CHECK(split("gpt-2", "a\xFF" "b") == V{"a", "\xFF", "b"});
  CHECK(split("qwen2", "\xE6\x9D") == V{"\xE6\x9D"});
}

TEST_CASE("unknown pre-tokenizer names are refused", "[pre_tokenizer]") {
  // "gpt2" is not a name llama.cpp accepts ("gpt-2" is).
  for (const char* bad : {"gpt2", "qwen3", "", "llama3 "}) {
    const auto p = les::PreTokenizer::create(bad);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == les::StatusCode::unsupported);
    CHECK_THAT(p.status().message(), Catch::Contains(std::string("'") + bad + "'") && Catch::Contains("qwen35"));
  }
}

TEST_CASE("all 86 names of llama.cpp are accepted, each with its type", "[pre_tokenizer]") {
  const auto names = les::PreTokenizer::names();
  CHECK(names.size() == 86);
  for (const auto& n : names) {
    const auto p = les::PreTokenizer::create(n);
    INFO(n << ": " << p.status().to_string());
    REQUIRE(p.ok());
    CHECK(p->name() == n);
    CHECK(!p->type().empty());
    REQUIRE(les::PreTokenizer::traits_of(n) != nullptr);
  }
  auto type_of = [](const char* n) { return les::PreTokenizer::create(n)->type(); };
  CHECK(type_of("hunyuan") == "qwen2");
  CHECK(type_of("grok-2") == "qwen2");
  CHECK(type_of("glm4") == "llama3");
  CHECK(type_of("minimax-m2") == "gpt-4o");
  CHECK(type_of("joyai-llm") == "deepseek-v3");
  CHECK(type_of("bailingmoe2") == "bailingmoe");
  CHECK(type_of("olmo") == "gpt2");
  CHECK(type_of("lfm2") == "llama3");
  CHECK(les::PreTokenizer::traits_of("lfm2")->add_bos_default);
  CHECK_FALSE(les::PreTokenizer::traits_of("dbrx")->ignore_merges);  // llama3 splitting without ignore_merges
  CHECK_FALSE(les::PreTokenizer::traits_of("gemma4")->byte_encode);
  CHECK(les::PreTokenizer::traits_of("gemma4")->force_add_bos);
  CHECK(les::PreTokenizer::traits_of("nope") == nullptr);
}

TEST_CASE("qwen35: combining marks stay with their letters", "[pre_tokenizer]") {
  CHECK(split("qwen2", "Cafe\u0301 nai\u0308ve 12") ==
        V{"Cafe", "\u0301", " nai", "\u0308ve", " ", "1", "2"});
  CHECK(split("qwen35", "Cafe\u0301 nai\u0308ve 12") == V{"Cafe\u0301", " nai\u0308ve", " ", "1", "2"});
  // In qwen2 a mark is a symbol; in qwen35 it is part of a letter run.
  CHECK(split("qwen2", "!\u0301a") == V{"!\u0301", "a"});
  CHECK(split("qwen35", "!\u0301a") == V{"!\u0301a"});
  CHECK(split("qwen35", "\u0301x !\u0301a") == V{"\u0301x", " !", "\u0301a"});
}

TEST_CASE("gpt-4o: llama.cpp's case split (ASCII case only)", "[pre_tokenizer]") {
  // A non-ASCII letter counts as upper and lower case, so "ÉCOLE" gives " É" + "COLE".
  CHECK(split("gpt-4o", "HelloWorld \u00C9COLE iPhone's 12345") ==
        V{"Hello", "World", " \u00C9", "COLE", " i", "Phone's", " ", "123", "45"});
  CHECK(split("llama4", "HTTPServer ABCdefGHI") == V{"HTTPServer", " ABCdef", "GHI"});
}

TEST_CASE("kimi-k2: Han runs, letters of any case, trailing contractions", "[pre_tokenizer]") {
  CHECK(split("kimi-k2", "\u4E2D\u6587English\u6DF7\u5408 it's 12345") ==
        V{"\u4E2D\u6587", "English", "\u6DF7\u5408", " it's", " ", "123", "45"});
}

TEST_CASE("deepseek-v3, afmoe, superbpe, exaone-moe, bloom, whitespace, gemma4", "[pre_tokenizer]") {
  CHECK(split("deepseek-v3", "Hello, \u4E16\u754C! 12345") ==
        V{"Hello", ",", " ", "\u4E16\u754C", "!", " ", "123", "45"});
  // afmoe: the text before a digit run is prefixed to its first group by the digit stage.
  CHECK(split("afmoe", "a  1234") == V{"a", " ", " ", "1", "234"});
  CHECK(split("superbpe", "x 1234567") == V{"x ", "1", "234", "567"});
  CHECK(split("exaone-moe", "hello world 12") == V{"hello world", " ", "1", "2"});
  CHECK(split("bloom", "Hello, world (x)") == V{"Hello", ",", " world", " (", "x", ")"});
  CHECK(split("whitespace", "a  b\tc") == V{"a", "  ", "b", "\t", "c"});
  CHECK(split("gemma4", "ab\n\ncd") == V{"ab", "\n\n", "cd"});
}
