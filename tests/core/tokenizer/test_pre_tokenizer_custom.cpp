// The hand-written splitters of pre_tokenizer_custom.h that stand for a
// pattern (gpt2, llama3, qwen2, qwen35) against SplitRegex running that
// pattern, on random strings over an alphabet of every class the patterns
// tell apart: the two implementations must split identically. (kimi-k2 and
// the digit groups are not their patterns by design; they are covered by
// hand-worked cases and by llama-tokenize.)
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/tokenizer/pre_tokenizer_custom.h"
#include "core/tokenizer/split_regex.h"
#include "core/tokenizer/unicode_class.h"
#include "core/tokenizer/utf8.h"

namespace {

using Spans = std::vector<std::pair<uint32_t, uint32_t>>;

// ASCII letters of both cases (and the contraction letters), non-ASCII letters,
// marks, digits, other numbers, punctuation, symbols, apostrophes, ASCII and
// non-ASCII whitespace, newlines, controls, format characters.
const std::vector<char32_t> kAlphabet = {
    'a', 'S', 's', 't', 'T', 'r', 'e', 'E', 'v', 'm', 'l', 'L', 'd', 'D', 'x', U'\u00E9', U'\u4E2D', U'\u0301',
    U'\u0308', '1', '9', U'\u0661', U'\u00B2', '.', '!', '-', U'\u2014', '$', '+', '~', U'\u20AC', U'\U0001F525',
    '\'', '\'', '\'', ' ', ' ', ' ', '\t', '\n', '\r', U'\u3000', U'\u00A0', '\v', U'\u0001', U'\u200B'};

std::vector<les::CodePoint> random_text(std::mt19937& rng, size_t len) {
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::vector<les::CodePoint> out;
  for (size_t i = 0; i < len; ++i) {
    const char32_t c = kAlphabet[pick(rng)];
    out.push_back({c, les::unicode_class(c), static_cast<uint32_t>(i)});
  }
  return out;
}

void check_same(les::CustomSplit custom, const char* pattern) {
  auto re = les::SplitRegex::compile(pattern);
  INFO(re.status().to_string());
  REQUIRE(re.ok());
  std::mt19937 rng(12345);
  les::SplitRegex::Scratch scratch;
  for (int iter = 0; iter < 4000; ++iter) {
    const auto text = random_text(rng, 1 + iter % 24);
    std::vector<uint32_t> syms;
    for (const auto& c : text) syms.push_back(les::regex_symbol(c.cp, c.flags, re->mode()));
    Spans a, b;
    custom(text.data(), static_cast<uint32_t>(text.size()), 0, a);
    re->split(syms.data(), static_cast<uint32_t>(syms.size()), 0, b, scratch);
    if (a != b) {
      std::string shown;
      for (const auto& c : text) {
        if (c.cp < 0x80 && c.cp >= 0x20) {
          shown.push_back(static_cast<char>(c.cp));
        } else {
          shown += fmt::format("<U+{:04X}>", static_cast<uint32_t>(c.cp));
        }
      }
      INFO(pattern << " on '" << shown << "'");
      REQUIRE(a == b);
    }
  }
}

}  // namespace

TEST_CASE("gpt2 splitter == its pattern", "[pre_tokenizer]") {
  check_same(les::split_gpt2, R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))");
}

TEST_CASE("llama3 splitter == its pattern", "[pre_tokenizer]") {
  check_same(les::split_llama3, R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
                                R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)");
}

TEST_CASE("qwen2 splitter == its pattern", "[pre_tokenizer]") {
  check_same(les::split_qwen2, R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
                               R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)");
}

TEST_CASE("qwen35 splitter == its pattern", "[pre_tokenizer]") {
  check_same(les::split_qwen35, R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N})"
                                R"(| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)");
}

TEST_CASE("digit groups: threes from the right, leading text joins the first group", "[pre_tokenizer]") {
  std::vector<les::CodePoint> text;
  const std::u32string s = U"ab1234567c12";
  for (size_t i = 0; i < s.size(); ++i) text.push_back({s[i], les::unicode_class(s[i]), static_cast<uint32_t>(i)});
  Spans out;
  les::split_digit_groups(text.data(), static_cast<uint32_t>(text.size()), 10, out);
  // "ab1" "234" "567" "c12" "" -> offsets shifted by base 10.
  CHECK(out == Spans{{10, 13}, {13, 16}, {16, 19}, {19, 22}});
}
