// Tokenizers on bad input: unsupported models and pre-tokenizers, malformed
// vocabularies, out-of-range ids, invalid UTF-8. Vocabularies are built in
// memory; nothing here needs fixtures.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/utf8.h"

namespace {

using les::StatusCode;
using les::TokenType;
using les::VocabData;

// GPT-2 byte -> symbol (printable bytes map to themselves, the rest to U+0100..).
std::string byte_symbol(unsigned b) {
  const auto self = [](unsigned x) { return (x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE; };
  char32_t cp = static_cast<char32_t>(b);
  if (!self(b)) {
    cp = 256;
    for (unsigned x = 0; x < b; ++x) cp += self(x) ? 0 : 1;
  }
  std::string s;
  les::utf8::append(s, cp);
  return s;
}

// A byte-level BPE vocabulary: the 256 byte symbols, "he", "ll", "hell",
// "Ġw", a control token and a user-defined token.
VocabData bpe_data() {
  VocabData d;
  d.model = "gpt2";
  d.pre = "gpt-2";
  for (unsigned b = 0; b < 256; ++b) d.tokens.push_back(byte_symbol(b));
  for (const char* t : {"he", "ll", "hell", "\xC4\xA0w"}) d.tokens.push_back(t);
  d.merges = {"h e", "l l", "he ll", "\xC4\xA0 w"};
  d.tokens.push_back("<|end|>");
  d.tokens.push_back("<tag>");
  d.types.assign(d.tokens.size(), TokenType::normal);
  d.types[d.tokens.size() - 2] = TokenType::control;
  d.types[d.tokens.size() - 1] = TokenType::user_defined;
  d.eos = static_cast<int64_t>(d.tokens.size() - 2);
  return d;
}

// An SPM vocabulary: <unk> <s> </s>, the 256 byte pieces, and a few pieces.
VocabData spm_data(bool with_bytes = true) {
  VocabData d;
  d.model = "llama";
  d.tokens = {"<unk>", "<s>", "</s>"};
  d.types = {TokenType::unknown, TokenType::control, TokenType::control};
  if (with_bytes) {
    for (unsigned b = 0; b < 256; ++b) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", b);
      d.tokens.push_back(buf);
      d.types.push_back(TokenType::byte);
    }
  }
  const char* pieces[] = {"\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab", "\xE2\x96\x81" "ab"};
  const float scores[] = {-1, -2, -3, -4, -5, -6};
  d.scores.assign(d.tokens.size(), 0.0f);
  for (size_t i = 0; i < 6; ++i) {
    d.tokens.push_back(pieces[i]);
    d.types.push_back(TokenType::normal);
    d.scores.push_back(scores[i]);
  }
  return d;
}

std::unique_ptr<les::Tokenizer> make(VocabData d) {
  auto v = les::Vocab::build(std::move(d));
  INFO(v.status().to_string());
  REQUIRE(v.ok());
  auto t = les::Tokenizer::create(std::make_shared<const les::Vocab>(std::move(v).value()));
  INFO(t.status().to_string());
  REQUIRE(t.ok());
  return std::move(t).value();
}

}  // namespace

TEST_CASE("Unknown tokenizer models are refused, naming the model", "[tokenizer]") {
  for (const char* model : {"t5", "rwkv", "ugm", ""}) {
    VocabData d = spm_data();
    d.model = model;
    const auto v = les::Vocab::build(d);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code() == StatusCode::unsupported);
    CHECK_THAT(v.status().message(), Catch::Contains(std::string("'") + model + "'"));
  }
}

TEST_CASE("Unknown pre-tokenizers are refused, naming them", "[tokenizer]") {
  VocabData d = bpe_data();
  d.pre = "no-such-pre";
  auto v = les::Vocab::build(d);
  REQUIRE(v.ok());
  auto t = les::Tokenizer::create(std::make_shared<const les::Vocab>(std::move(v).value()));
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == StatusCode::unsupported);
  CHECK_THAT(t.status().message(), Catch::Contains("'no-such-pre'"));

  VocabData s = spm_data();
  s.pre = "qwen2";
  auto sv = les::Vocab::build(s);
  REQUIRE(sv.ok());
  auto st = les::Tokenizer::create(std::make_shared<const les::Vocab>(std::move(sv).value()));
  REQUIRE_FALSE(st.ok());
  CHECK(st.status().code() == StatusCode::unsupported);
  CHECK_THAT(st.status().message(), Catch::Contains("'qwen2'"));
}

TEST_CASE("Malformed vocabularies are format errors", "[tokenizer]") {
  SECTION("no tokens") {
    VocabData d = spm_data();
    d.tokens.clear();
    d.types.clear();
    d.scores.clear();
    CHECK(les::Vocab::build(d).status().code() == StatusCode::format);
  }
  SECTION("scores of the wrong length") {
    VocabData d = spm_data();
    d.scores.pop_back();
    const auto v = les::Vocab::build(d);
    CHECK(v.status().code() == StatusCode::format);
    CHECK_THAT(v.status().message(), Catch::Contains("scores"));
  }
  SECTION("token type out of range") {
    VocabData d = spm_data();
    d.types[5] = static_cast<TokenType>(9);
    CHECK(les::Vocab::build(d).status().code() == StatusCode::format);
  }
  SECTION("special id out of range") {
    VocabData d = spm_data();
    d.eos = 100000;
    const auto v = les::Vocab::build(d);
    CHECK(v.status().code() == StatusCode::format);
    CHECK_THAT(v.status().message(), Catch::Contains("eos") && Catch::Contains("100000"));
    d.eos = -3;
    CHECK(les::Vocab::build(d).status().code() == StatusCode::format);
  }
  SECTION("merge without a separator") {
    VocabData d = bpe_data();
    d.merges.push_back("hell");
    const auto v = les::Vocab::build(d);
    CHECK(v.status().code() == StatusCode::format);
    CHECK_THAT(v.status().message(), Catch::Contains("merges[4]"));
  }
  SECTION("merges that produce no token are dropped") {
    VocabData d = bpe_data();
    d.merges.push_back("a b");  // "ab" is not a token
    const auto v = les::Vocab::build(d);
    REQUIRE(v.ok());
    CHECK(v->n_merges() == 4);
    CHECK(v->n_merges_dropped() == 1);
  }
}

TEST_CASE("Out-of-range ids are invalid_argument errors", "[tokenizer]") {
  std::vector<std::unique_ptr<les::Tokenizer>> toks;
  toks.push_back(make(spm_data()));
  toks.push_back(make(bpe_data()));
  for (const auto& tok : toks) {
    const int32_t n = tok->vocab().n_tokens();
    for (const int32_t id : {-1, n, n + 1000, INT32_MIN, INT32_MAX}) {
      const auto p = tok->token_to_piece(id);
      REQUIRE_FALSE(p.ok());
      CHECK(p.status().code() == StatusCode::invalid_argument);
      CHECK_THAT(p.status().message(), Catch::Contains(std::to_string(id)));
    }
    const std::vector<int32_t> ids = {0, n};
    CHECK(tok->detokenize(ids).status().code() == StatusCode::invalid_argument);

    // The stream keeps its state across a rejected id.
    les::StreamingDetokenizer stream(*tok);
    const int32_t first_byte = tok->vocab().model() == les::VocabModel::spm ? tok->vocab().find("<0xC3>")
                                                                              : tok->vocab().find(byte_symbol(0xC3));
    const int32_t second_byte = tok->vocab().model() == les::VocabModel::spm ? tok->vocab().find("<0xA9>")
                                                                               : tok->vocab().find(byte_symbol(0xA9));
    REQUIRE(stream.push(first_byte).ok());
    CHECK_FALSE(stream.push(-7).ok());
    const auto s = stream.push(second_byte);
    REQUIRE(s.ok());
    CHECK(*s == "\xC3\xA9");
  }
}

TEST_CASE("Invalid UTF-8 text is tokenized byte by byte and round-trips", "[tokenizer]") {
  const std::vector<std::string> bad = {
      std::string("\xFF\xFE"),         std::string("a\xC3"),         std::string("\xC0\xAF"),  // overlong
      std::string("\xED\xA0\x80"),     std::string("\xF4\x90\x80\x80"),  // surrogate, > U+10FFFF
      std::string("ab \x80 ba\xE2\x96"), std::string("\0\x01 a", 4),
  };
  SECTION("SPM with byte fallback") {
    const auto tok = make(spm_data());
    for (const std::string& s : bad) {
      const auto ids = tok->tokenize(s, true, true);
      REQUIRE(ids.ok());
      const auto back = tok->detokenize(*ids);
      REQUIRE(back.ok());
      CHECK(*back == s);
    }
  }
  SECTION("byte-level BPE") {
    const auto tok = make(bpe_data());
    for (const std::string& s : bad) {
      const auto ids = tok->tokenize(s, true, true);
      REQUIRE(ids.ok());
      const auto back = tok->detokenize(*ids);
      REQUIRE(back.ok());
      CHECK(*back == s);
    }
  }
  SECTION("SPM without byte pieces falls back to unk") {
    const auto tok = make(spm_data(/*with_bytes=*/false));
    const auto ids = tok->tokenize("a\xFF", false, false);
    REQUIRE(ids.ok());
    CHECK(*ids == std::vector<int32_t>{tok->vocab().find("\xE2\x96\x81" "a"), tok->vocab().unk()});
  }
  SECTION("no byte symbol and no unk is an error, not a crash") {
    // BPE vocabulary without the symbol of byte 0xFF and without unk.
    VocabData b = bpe_data();
    for (auto& t : b.tokens) {
      if (t == byte_symbol(0xFF)) t = "<no-ff>";
    }
    const auto tok = make(b);
    const auto ids = tok->tokenize("he\xFF", false, false);
    REQUIRE_FALSE(ids.ok());
    CHECK(ids.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(ids.status().message(), Catch::Contains("0xFF"));
  }
}

TEST_CASE("Special tokens: control only with parse_special, user-defined always", "[tokenizer]") {
  const auto tok = make(bpe_data());
  const int32_t end = tok->vocab().find("<|end|>");
  const int32_t tag = tok->vocab().find("<tag>");
  const auto with = tok->tokenize("hell<|end|>", false, true);
  REQUIRE(with.ok());
  CHECK(*with == std::vector<int32_t>{tok->vocab().find("hell"), end});
  const auto without = tok->tokenize("hell<|end|>", false, false);
  REQUIRE(without.ok());
  CHECK(without->size() > 2);
  CHECK(std::find(without->begin(), without->end(), end) == without->end());
  const auto user = tok->tokenize("<tag>hell", false, false);
  REQUIRE(user.ok());
  CHECK(*user == std::vector<int32_t>{tag, tok->vocab().find("hell")});
  // Control tokens decode to nothing unless rendered.
  CHECK(*tok->token_to_piece(end) == "");
  CHECK(*tok->token_to_piece(end, true) == "<|end|>");
  CHECK(*tok->detokenize(*with) == "hell");
}

TEST_CASE("SPM merges by score, adds the space prefix and BOS", "[tokenizer]") {
  VocabData d = spm_data();
  d.add_bos = true;
  const auto tok = make(d);
  const auto ids = tok->tokenize("ab a", true, false);
  REQUIRE(ids.ok());
  // "▁ab▁a": both "▁a" (-4) merge before "ab" (-5), which is then stale;
  // "▁a"+"b" = "▁ab" (-6) merges last.
  CHECK(*ids == std::vector<int32_t>{1, tok->vocab().find("\xE2\x96\x81" "ab"), tok->vocab().find("\xE2\x96\x81" "a")});
  CHECK(*tok->detokenize(*ids) == "ab a");
  CHECK(tok->tokenize("", true, false)->size() == 1);
  CHECK(tok->tokenize("", false, false)->empty());
}
