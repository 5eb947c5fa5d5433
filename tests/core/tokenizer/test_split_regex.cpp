// SplitRegex: ECMAScript matching semantics (ordered alternation, greedy
// backtracking, atomic lookaheads, regex_iterator's empty matches), the two
// symbol modes, refused patterns, and long inputs. Expected values are worked
// out from ECMA-262 §22.2 by hand.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/tokenizer/split_regex.h"
#include "core/tokenizer/unicode_class.h"
#include "core/tokenizer/utf8.h"

namespace {

using les::SplitRegex;
using les::SymbolMode;

std::vector<uint32_t> symbols(std::string_view text, SymbolMode mode) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    const auto d = les::utf8::decode(text, i);
    out.push_back(les::regex_symbol(d.cp, les::unicode_class(d.cp), mode));
    i += d.len;
  }
  return out;
}

SplitRegex compile(std::string_view pattern) {
  auto re = SplitRegex::compile(pattern);
  INFO(re.status().to_string());
  REQUIRE(re.ok());
  return std::move(re).value();
}

// The pieces of `text` (ASCII-only texts: symbol i is byte i).
std::vector<std::string> split(std::string_view pattern, std::string_view text) {
  const SplitRegex re = compile(pattern);
  const auto s = symbols(text, re.mode());
  std::vector<SplitRegex::Span> spans;
  SplitRegex::Scratch scratch;
  re.split(s.data(), static_cast<uint32_t>(s.size()), 0, spans, scratch);
  std::vector<std::string> out;
  for (const auto& [b, e] : spans) out.emplace_back(text.substr(b, e - b));
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("Alternatives are tried in order, not longest first", "[split_regex]") {
  CHECK(split("a|ab", "ab") == V{"a", "b"});
  CHECK(split("ab|a", "ab") == V{"ab"});
  // The text between matches is a piece of its own.
  CHECK(split("b+", "aabbbcb") == V{"aa", "bbb", "c", "b"});
}

TEST_CASE("Greedy quantifiers give back one repetition at a time", "[split_regex]") {
  // \s+(?!\S): the run gives back its last space when a non-space follows.
  CHECK(split(R"(\s+(?!\S)|\s+)", "a   b") == V{"a", "  ", " ", "b"});
  CHECK(split(R"(\s*[\r\n]+)", " \n\n  x") == V{" \n\n", "  x"});
  CHECK(split("x{2,3}", "xxxxxxx") == V{"xxx", "xxx", "x"});
  CHECK(split("(?:ab){2}", "abababab") == V{"abab", "abab"});
  CHECK(split("a(?:bc)*c", "abcbcc") == V{"abcbcc"});
  CHECK(split("a(?:bc)*bcd", "abcbcbcd") == V{"abcbcbcd"});
}

TEST_CASE("Lookaheads are atomic and do not consume", "[split_regex]") {
  CHECK(split("a(?=b)", "abac") == V{"a", "bac"});
  CHECK(split("a(?!b)", "abac") == V{"ab", "a", "c"});
  // (?=[L])[^a-z] folds to one class: a letter that is not ASCII lowercase.
  CHECK(split(R"((?:(?=\p{L})[^a-z])+)", "abCDe1F") == V{"ab", "CD", "e1", "F"});
}

TEST_CASE("Empty matches split like std::regex_iterator", "[split_regex]") {
  // superbpe: the positions followed by a multiple of three digits.
  CHECK(split(R"((?=(\d{3})+(?!\d)))", "1234567") == V{"1", "234", "567"});
  CHECK(split(R"((?=(\d{3})+(?!\d)))", "123") == V{"123"});
  CHECK(split("x*", "ab") == V{"a", "b"});
}

TEST_CASE("Case-insensitive groups fold ASCII letters", "[split_regex]") {
  CHECK(split("(?i:'s|'ll)", "'S'Ll'x") == V{"'S", "'Ll", "'x"});
  CHECK(split("'(?i:[sd]|ll)", "'D'LL") == V{"'D", "'LL"});
}

TEST_CASE("Anchors: $ at the end of the piece, \\b at word edges", "[split_regex]") {
  CHECK(split(R"(\s+$)", "a  b  ") == V{"a  b", "  "});
  CHECK(split(R"(\b\w)", "ab cd") == V{"a", "b ", "c", "d"});
}

TEST_CASE("Categories mode: one symbol per class, llama.cpp's ASCII members", "[split_regex]") {
  const SplitRegex re = compile(R"(\p{L}+)");
  CHECK(re.mode() == SymbolMode::categories);
  CHECK(compile("[一-龥]+").mode() == SymbolMode::code_points);
  // Non-ASCII: letters, numbers, punctuation, marks, symbols, White_Space, other.
  CHECK(les::regex_symbol(U'\u00E9', les::unicode_class(U'\u00E9'), SymbolMode::categories) == 0xD2);
  CHECK(les::regex_symbol(U'\u0661', les::unicode_class(U'\u0661'), SymbolMode::categories) == 0xD1);
  CHECK(les::regex_symbol(U'\u2014', les::unicode_class(U'\u2014'), SymbolMode::categories) == 0xD3);
  CHECK(les::regex_symbol(U'\u0301', les::unicode_class(U'\u0301'), SymbolMode::categories) == 0xD4);
  CHECK(les::regex_symbol(U'\u20AC', les::unicode_class(U'\u20AC'), SymbolMode::categories) == 0xD5);
  CHECK(les::regex_symbol(U'\u3000', les::unicode_class(U'\u3000'), SymbolMode::categories) == 0x0B);
  CHECK(les::regex_symbol(U'\u200B', les::unicode_class(U'\u200B'), SymbolMode::categories) == 0xD0);
  CHECK(les::regex_symbol(U'\u3000', les::unicode_class(U'\u3000'), SymbolMode::code_points) == 0x0B);
  CHECK(les::regex_symbol(U'\u4E00', les::unicode_class(U'\u4E00'), SymbolMode::code_points) == 0x4E00);
  // \p{Lu} is every letter (no case split); \p{S} leaves out '~'.
  CHECK(split(R"(\p{Lu}+)", "abC1") == V{"abC", "1"});
  CHECK(split(R"(\p{S}+)", "$+~<") == V{"$+", "~", "<"});
  CHECK(split(R"(\p{P}+)", "!,~a") == V{"!,", "~a"});
}

TEST_CASE("Unsupported or malformed patterns are refused with a message", "[split_regex]") {
  for (const char* bad : {"(ab", "ab)", "[ab", "a**", "a*?", "a++", "(?<=a)b", R"(\p{Han}+)", R"(\p{L}é)", "(?:a*)*",
                          "*a", R"(\q)", "x{3,2}", "a\\"}) {
    INFO(bad);
    const auto re = SplitRegex::compile(bad);
    REQUIRE_FALSE(re.ok());
    CHECK(re.status().code() == les::StatusCode::invalid_argument);
    CHECK_THAT(re.status().message(), Catch::Contains("pattern"));
  }
}

TEST_CASE("Long runs do not recurse per character", "[split_regex]") {
  // A million spaces, then a letter: one piece of n-1 spaces, then " x".
  const std::string text = std::string(1000000, ' ') + "x";
  const auto pieces = split(R"(\s+(?!\S)|\s+|[^\s]+)", text);
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[0].size() == 999999);
  // A group loop over a long word (exaone-moe's shape).
  const std::string words = [] {
    std::string s;
    for (int i = 0; i < 200000; ++i) s += "ab ";
    return s + "ab";
  }();
  CHECK(split(R"((?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+)", words) == V{words});
}
