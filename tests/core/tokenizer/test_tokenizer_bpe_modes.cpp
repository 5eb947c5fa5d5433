// BPE settings that come with a pre-tokenizer name (PreTokenizerTraits), on
// small hand-built vocabularies: SentencePiece-style BPE (gemma4, sarvam-moe:
// spaces as U+2581, UTF-8 characters as symbols, <0xNN> byte fallback, gemma4's
// newline tokens and forced BOS), raw UTF-8 without escaping (whitespace), the
// "whitespace" and "gemma4" tokenizer models, and the names that imply add_bos. Expected ids are
// worked out by hand from tokenizer_bpe.h.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/vocab.h"

namespace {

using les::TokenType;
using les::VocabData;

const std::string kSpace = "\xE2\x96\x81";  // U+2581

// 0..255 "<0xNN>", then the pieces below, then "<s>".
VocabData spm_style(const std::string& pre) {
  VocabData d;
  d.model = "gpt2";
  d.pre = pre;
  for (int b = 0; b < 256; ++b) {
    d.tokens.push_back(fmt::format("<0x{:02X}>", b));
    d.types.push_back(TokenType::byte);
  }
  for (const std::string& t : {kSpace, std::string("a"), std::string("b"), std::string("ab"), kSpace + "ab",
                               std::string("\n"), std::string("\n\n")}) {
    d.tokens.push_back(t);
    d.types.push_back(TokenType::normal);
  }
  d.tokens.push_back("<s>");
  d.types.push_back(TokenType::control);
  d.bos = 263;
  d.merges = {"a b", kSpace + " ab"};
  return d;
}

constexpr int32_t kTokSpace = 256, kA = 257, kB = 258, kAB = 259, kSpaceAB = 260, kNl = 261, kNlNl = 262, kBos = 263;

std::unique_ptr<les::Tokenizer> make(VocabData d) {
  auto v = les::Vocab::build(std::move(d));
  INFO(v.status().to_string());
  REQUIRE(v.ok());
  auto t = les::Tokenizer::create(std::make_shared<const les::Vocab>(std::move(v).value()));
  INFO(t.status().to_string());
  REQUIRE(t.ok());
  return std::move(t).value();
}

std::vector<int32_t> ids(const les::Tokenizer& t, const std::string& text, bool add_special = false) {
  auto r = t.tokenize(text, add_special, false);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return *r;
}

using V = std::vector<int32_t>;

}  // namespace

TEST_CASE("gemma4: U+2581 spaces, character symbols, byte fallback, newline tokens, BOS", "[tokenizer]") {
  const auto t = make(spm_style("gemma4"));
  // "ab▁ab" | "\n\n" (a token: emitted as is) | "c" (no token: its byte <0x63>).
  CHECK(ids(*t, "ab ab\n\nc") == V{kAB, kSpaceAB, kNlNl, 0x63});
  // A missing character becomes all of its UTF-8 bytes.
  CHECK(ids(*t, "\xC3\xA9") == V{0xC3, 0xA9});
  CHECK(ids(*t, "\n\n\n") == V{kNl, kNl, kNl});  // not a token: merged as usual (no merge)
  // add_bos_token is absent (false for BPE), yet gemma4 adds BOS.
  CHECK(t->vocab().add_bos());
  CHECK(ids(*t, "a", true) == V{kBos, kA});
  VocabData no_bos = spm_style("gemma4");
  no_bos.add_bos = false;
  CHECK(make(no_bos)->vocab().add_bos());
  // Decoding: U+2581 back to ' ', byte tokens to their bytes.
  auto text = t->detokenize(V{kAB, kSpaceAB, kNlNl, 0x63, 0xC3, 0xA9});
  REQUIRE(text.ok());
  CHECK(*text == "ab ab\n\nc\xC3\xA9");
}

TEST_CASE("sarvam-moe: SentencePiece-style BPE without gemma4's extras", "[tokenizer]") {
  const auto t = make(spm_style("sarvam-moe"));
  CHECK(ids(*t, "ab ab\n\nc") == V{kAB, kSpaceAB, kNl, kNl, 0x63});
  CHECK_FALSE(t->vocab().add_bos());
  CHECK(ids(*t, " b") == V{kTokSpace, kB});
}

TEST_CASE("whitespace: raw UTF-8 pieces, spaces not escaped", "[tokenizer]") {
  const auto t = make(spm_style("whitespace"));
  CHECK(ids(*t, "ab  ab") == V{kAB, 0x20, 0x20, kAB});
}

TEST_CASE("The whitespace tokenizer model: words between whitespace, lowercased on request", "[tokenizer]") {
  VocabData d = spm_style("whitespace");
  d.model = "whitespace";
  const auto t = make(d);
  CHECK_FALSE(t->vocab().lowercase());  // pre "whitespace": not lowercased unless the file says so
  // The whitespace is dropped; "AB" is no token and its letters neither: bytes.
  CHECK(ids(*t, " ab \t\u3000ab\nAB ") == V{kAB, kAB, 0x41, 0x42});
  d.lowercase = true;
  CHECK(ids(*make(d), "ab AB") == V{kAB, kAB});
}

TEST_CASE("The gemma4 tokenizer model is BPE with the gemma4 pre-tokenizer", "[tokenizer]") {
  VocabData d = spm_style("qwen2");  // ignored, as llama.cpp ignores it
  d.model = "gemma4";
  const auto t = make(d);
  CHECK(t->vocab().pre() == "gemma4");
  CHECK(t->vocab().warnings().empty());
  CHECK(ids(*t, "ab ab") == V{kAB, kSpaceAB});
}

TEST_CASE("Names that imply BOS when add_bos_token is absent", "[tokenizer]") {
  for (const char* pre : {"llama-bpe", "llama3", "lfm2", "falcon3", "tekken", "chameleon"}) {
    INFO(pre);
    CHECK(make(spm_style(pre))->vocab().add_bos());
    VocabData d = spm_style(pre);
    d.add_bos = false;
    CHECK_FALSE(make(d)->vocab().add_bos());
  }
  for (const char* pre : {"qwen2", "qwen35", "dbrx", "glm4", "gpt-2", "deepseek-v3", "kimi-k2"}) {
    INFO(pre);
    CHECK_FALSE(make(spm_style(pre))->vocab().add_bos());
  }
}
