// Tokenizers against llama.cpp's tokenizer test suite (shared/fixtures/tokenizer,
// expected ids made with HF `tokenizers`, add_special=false, parse_special=false)
// and against the token ids llama.cpp produced for the fixture models'
// prompts (synthetic/reference, trained/reference).
#include <catch2/catch.hpp>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"
#include "support/fixtures.h"
#include "tokenizer_test_util.h"

using les::test::load_tokenizer;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The .inp cases: strings separated by "\n__ggml_vocab_test__\n" (each case is
// followed by the separator, so the text after the last one is not a case).
std::vector<std::string> read_cases(const std::string& path) {
  const std::string text = read_file(path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> cases;
  size_t start = 0;
  for (size_t pos; (pos = text.find(sep, start)) != std::string::npos; start = pos + sep.size()) {
    cases.push_back(text.substr(start, pos - start));
  }
  return cases;
}

std::vector<std::vector<int32_t>> read_expected(const std::string& path) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<int32_t> ids;
    for (int32_t id; ls >> id;) ids.push_back(id);
    out.push_back(std::move(ids));
  }
  return out;
}

std::string hex(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) out += fmt::format("{:02x}", c);
  return out;
}

void check_vocab_suite(const std::string& name, bool round_trip = true) {
  LES_REQUIRE_FIXTURE(gguf, "tokenizer/ggml-vocab-" + name + ".gguf");
  LES_REQUIRE_FIXTURE(inp, "tokenizer/ggml-vocab-" + name + ".gguf.inp");
  LES_REQUIRE_FIXTURE(outp, "tokenizer/ggml-vocab-" + name + ".gguf.out");
  const auto tok = load_tokenizer(gguf);
  const auto cases = read_cases(inp);
  const auto expected = read_expected(outp);
  REQUIRE(cases.size() >= 40);
  REQUIRE(expected.size() >= cases.size());
  size_t n_pass = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto got = tok->tokenize(cases[i], /*add_special=*/false, /*parse_special=*/false);
    REQUIRE(got.ok());
    INFO(name << " case " << i << ": '" << cases[i] << "'\n  expected " << fmt::format("{}", expected[i])
              << "\n  got      " << fmt::format("{}", *got));
    CHECK(*got == expected[i]);
    if (*got == expected[i]) ++n_pass;
    // Decoding the expected ids gives the text back (SPM: the added leading
    // space is removed by detokenize).
    if (!round_trip) continue;
    const auto text = tok->detokenize(expected[i]);
    REQUIRE(text.ok());
    CHECK(hex(*text) == hex(cases[i]));
  }
  INFO(name << ": " << n_pass << "/" << cases.size() << " cases");
  CHECK(n_pass == cases.size());
}

}  // namespace

TEST_CASE("SPM vocabularies pass llama.cpp's tokenizer suite", "[tokenizer][fixtures]") {
  for (const char* name : {"llama-spm", "phi-3"}) {
    SECTION(name) { check_vocab_suite(name); }
  }
}

TEST_CASE("BPE vocabularies pass llama.cpp's tokenizer suite", "[tokenizer][fixtures]") {
  for (const char* name : {"gpt-2", "deepseek-llm", "deepseek-coder", "falcon", "mpt", "starcoder", "refact"}) {
    SECTION(name) { check_vocab_suite(name); }
  }
}

TEST_CASE("Vocabularies without test cases load", "[tokenizer][fixtures]") {
  for (const char* name : {"baichuan", "gpt-neox"}) {
    SECTION(name) {
      LES_REQUIRE_FIXTURE(gguf, std::string("tokenizer/ggml-vocab-") + name + ".gguf");
      const auto tok = load_tokenizer(gguf);
      const auto ids = tok->tokenize("Hello world", false, false);
      REQUIRE(ids.ok());
      CHECK(!ids->empty());
      const auto back = tok->detokenize(*ids);
      REQUIRE(back.ok());
      CHECK(*back == "Hello world");
    }
  }
}

TEST_CASE("The WordPiece (bert) vocabulary passes llama.cpp's tokenizer suite", "[tokenizer][fixtures]") {
  // Lower-casing and accent stripping are lossy: no round trip.
  check_vocab_suite("bert-bge", /*round_trip=*/false);
}

TEST_CASE("WordPiece with add_special is [CLS] ... [SEP], as llama.cpp", "[tokenizer][fixtures]") {
  LES_REQUIRE_FIXTURE(gguf, "tokenizer/ggml-vocab-bert-bge.gguf");
  const auto tok = load_tokenizer(gguf);
  const auto ids = tok->tokenize("Hello World!", /*add_special=*/true, /*parse_special=*/false);
  REQUIRE(ids.ok());
  CHECK(*ids == std::vector<int32_t>{101, 7592, 2088, 999, 102});  // llama-tokenize, BOS on
}

namespace {

// round_trip: whether detokenize(tokenize(text)) == text must hold. It does
// not for the 4096-piece prefixes of the Llama-2 vocabulary (mixtral,
// llama-dense): "▁" alone is not among their pieces, so a space before a digit
// or symbol is byte-fallback E2 96 81 and decodes as U+2581, in llama.cpp too.
void check_model_reference(const std::string& model_rel, const std::string& json_rel, bool round_trip) {
  LES_REQUIRE_FIXTURE(gguf, model_rel);
  LES_REQUIRE_FIXTURE(json_path, json_rel);
  const auto tok = load_tokenizer(gguf);
  const auto ref = nlohmann::json::parse(read_file(json_path));
  CHECK(ref["vocab"]["n_vocab"].get<int32_t>() == tok->vocab().n_tokens());
  CHECK(ref["vocab"]["add_bos"].get<bool>() == tok->vocab().add_bos());
  CHECK(ref["vocab"]["bos"].get<int32_t>() == tok->vocab().bos());
  CHECK(ref["vocab"]["eos"].get<int32_t>() == tok->vocab().eos());
  REQUIRE(ref["prompts"].size() >= 4);
  for (const auto& p : ref["prompts"]) {
    const std::string text = p["text"].get<std::string>();
    INFO(model_rel << " prompt " << p["index"].get<int>() << ": '" << text << "'");
    const auto no_special = tok->tokenize(text, false, false);
    REQUIRE(no_special.ok());
    CHECK(*no_special == p["tokens_no_special"].get<std::vector<int32_t>>());
    const auto model = tok->tokenize(text, true, false);
    REQUIRE(model.ok());
    CHECK(*model == p["tokens_model"].get<std::vector<int32_t>>());

    // Round trip (BOS renders as nothing; the SPM space prefix is removed).
    const auto back = tok->detokenize(*model);
    REQUIRE(back.ok());
    if (round_trip) CHECK(*back == text);

    // Every generated token's bytes (the reference renders special tokens,
    // which a random-weight model may emit) and the continuation's text (which
    // leaves them out).
    const auto ids = p["greedy"]["ids"].get<std::vector<int32_t>>();
    const auto pieces_hex = p["greedy"]["pieces_hex"].get<std::vector<std::string>>();
    REQUIRE(ids.size() == pieces_hex.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto piece = tok->token_to_piece(ids[i], /*render_special=*/true);
      REQUIRE(piece.ok());
      CHECK(hex(*piece) == pieces_hex[i]);
    }
    const auto cont = tok->detokenize(ids);
    REQUIRE(cont.ok());
    CHECK(hex(*cont) == p["greedy"]["text_hex"].get<std::string>());
  }
}

}  // namespace

TEST_CASE("Model vocabularies give llama.cpp's prompt tokens", "[tokenizer][fixtures]") {
  SECTION("synthetic qwen3moe (BPE, qwen2 pre-tokenizer)") {
    check_model_reference("synthetic/qwen3moe-F16.gguf", "synthetic/reference/qwen3moe-F16.json", true);
  }
  SECTION("trained tiny-qwen3moe (SPM)") {
    check_model_reference("trained/tiny-qwen3moe-F16.gguf", "trained/reference/tiny-qwen3moe-F16.json", true);
  }
  SECTION("synthetic mixtral (SPM, Llama-2 prefix)") {
    check_model_reference("synthetic/mixtral-Q4_K_M.gguf", "synthetic/reference/mixtral-Q4_K_M.json", false);
  }
  SECTION("synthetic llama-dense (SPM)") {
    check_model_reference("synthetic/llama-dense-Q4_K_M.gguf", "synthetic/reference/llama-dense-Q4_K_M.json", false);
  }
  SECTION("synthetic qwen2moe (BPE)") {
    check_model_reference("synthetic/qwen2moe-Q4_K_M.gguf", "synthetic/reference/qwen2moe-Q4_K_M.json", true);
  }
  SECTION("synthetic qwen35moe (BPE)") {
    check_model_reference("synthetic/qwen35moe-F16.gguf", "synthetic/reference/qwen35moe-F16.json", true);
  }
}

TEST_CASE("Streaming detokenisation emits a character split over byte tokens whole", "[tokenizer][fixtures]") {
  SECTION("SPM byte fallback") {
    LES_REQUIRE_FIXTURE(gguf, "trained/tiny-qwen3moe-F16.gguf");
    const auto tok = load_tokenizer(gguf);
    // U+6771 (3 bytes) is not a piece of this English vocabulary: it becomes
    // three <0xNN> byte tokens after the "▁" piece.
    const std::string text = "\xE6\x9D\xB1";
    const auto ids = tok->tokenize(text, false, false);
    REQUIRE(ids.ok());
    REQUIRE(ids->size() == 4);
    for (size_t i = 1; i < 4; ++i) CHECK(tok->vocab().type((*ids)[i]) == les::TokenType::byte);
    les::StreamingDetokenizer stream(*tok);
    std::vector<std::string> outs;
    for (const int32_t id : *ids) {
      auto s = stream.push(id);
      REQUIRE(s.ok());
      outs.push_back(*s);
    }
    CHECK(outs == std::vector<std::string>{"", "", "", text});
    CHECK(stream.flush().empty());
  }
  SECTION("byte-level BPE") {
    LES_REQUIRE_FIXTURE(gguf, "synthetic/qwen3moe-F16.gguf");
    const auto tok = load_tokenizer(gguf);
    // U+1F680 (4 bytes): its byte symbols do not merge in this 4096-token vocabulary.
    const std::string text = "\xF0\x9F\x9A\x80";
    const auto ids = tok->tokenize(text, false, false);
    REQUIRE(ids.ok());
    REQUIRE(ids->size() >= 2);
    les::StreamingDetokenizer stream(*tok);
    std::string all;
    for (size_t i = 0; i < ids->size(); ++i) {
      auto s = stream.push((*ids)[i]);
      REQUIRE(s.ok());
      if (i + 1 < ids->size()) CHECK(s->empty());
      all += *s;
    }
    CHECK(all == text);
    CHECK(stream.flush().empty());
  }
}
