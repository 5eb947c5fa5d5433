// Vocab::from_gguf on GGUF images written in memory: the keys it reads, the
// defaults, the errors, and an end-to-end round trip of LES's own synthetic
// SPM vocabulary (synth/synth_vocab.h) through GGUF and the SPM tokenizer.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "synth/synth_vocab.h"
#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/vocab.h"

namespace {

using les::StatusCode;
using les::gguf::GgufWriter;
using les::gguf::ValueType;

les::Result<les::Vocab> load(const GgufWriter& w) {
  const std::vector<uint8_t> image = w.write_to_memory();
  auto file = les::gguf::GgufFile::parse(image.data(), image.size());
  if (!file.ok()) return file.status();
  return les::Vocab::from_gguf(**file);
}

GgufWriter tiny_spm_writer() {
  GgufWriter w;
  REQUIRE(w.set_string("tokenizer.ggml.model", "llama").ok());
  REQUIRE(w.set_array_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "a"}).ok());
  const std::vector<double> scores = {0, 0, 0, -1, -2};
  REQUIRE(w.set_array_numbers("tokenizer.ggml.scores", ValueType::FLOAT32, scores).ok());
  const std::vector<int64_t> types = {2, 3, 3, 1, 1};
  REQUIRE(w.set_array_ints("tokenizer.ggml.token_type", ValueType::INT32, types).ok());
  return w;
}

}  // namespace

TEST_CASE("from_gguf reads the tokenizer keys and applies SPM defaults", "[vocab]") {
  const GgufWriter w = tiny_spm_writer();
  const auto v = load(w);
  INFO(v.status().to_string());
  REQUIRE(v.ok());
  CHECK(v->model() == les::VocabModel::spm);
  CHECK(v->pre() == "default");
  CHECK(v->n_tokens() == 5);
  CHECK(v->score(3) == -1.0f);
  CHECK(v->type(0) == les::TokenType::unknown);
  CHECK(v->type(1) == les::TokenType::control);
  CHECK(v->find("a") == 4);
  CHECK(v->find("b") == les::kNoToken);
  // Absent keys: bos 1, eos 2, unk 0, no pad, add_bos, add_space_prefix.
  CHECK(v->bos() == 1);
  CHECK(v->eos() == 2);
  CHECK(v->unk() == 0);
  CHECK(v->pad() == les::kNoToken);
  CHECK(v->add_bos());
  CHECK_FALSE(v->add_eos());
  CHECK(v->add_space_prefix());
}

TEST_CASE("from_gguf reads explicit ids, flags and BPE merges", "[vocab]") {
  GgufWriter w;
  REQUIRE(w.set_string("tokenizer.ggml.model", "gpt2").ok());
  REQUIRE(w.set_string("tokenizer.ggml.pre", "qwen2").ok());
  REQUIRE(w.set_array_strings("tokenizer.ggml.tokens", {"a", "b", "ab", "<|e|>"}).ok());
  REQUIRE(w.set_array_strings("tokenizer.ggml.merges", {"a b"}).ok());
  REQUIRE(w.set_u32("tokenizer.ggml.eos_token_id", 3).ok());
  REQUIRE(w.set_u32("tokenizer.ggml.padding_token_id", 3).ok());
  REQUIRE(w.set_bool("tokenizer.ggml.add_eos_token", true).ok());
  const auto v = load(w);
  INFO(v.status().to_string());
  REQUIRE(v.ok());
  CHECK(v->model() == les::VocabModel::bpe);
  CHECK(v->pre() == "qwen2");
  CHECK(v->bos() == les::kNoToken);
  CHECK(v->eos() == 3);
  CHECK(v->pad() == 3);
  CHECK_FALSE(v->add_bos());
  CHECK(v->add_eos());
  CHECK_FALSE(v->add_space_prefix());
  REQUIRE(v->find_merge(0, 1) != nullptr);
  CHECK(v->find_merge(0, 1)->rank == 0);
  CHECK(v->find_merge(0, 1)->result == 2);
  CHECK(v->find_merge(1, 0) == nullptr);
}

TEST_CASE("from_gguf errors name what is wrong", "[vocab]") {
  SECTION("no tokenizer.ggml.model") {
    GgufWriter w;
    REQUIRE(w.set_array_strings("tokenizer.ggml.tokens", {"a"}).ok());
    const auto v = load(w);
    REQUIRE_FALSE(v.ok());
    CHECK_THAT(v.status().message(), Catch::Contains("tokenizer.ggml.model"));
  }
  SECTION("an unsupported model") {
    GgufWriter w = tiny_spm_writer();
    REQUIRE(w.set_string("tokenizer.ggml.model", "t5").ok());
    const auto v = load(w);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code() == StatusCode::unsupported);
    CHECK_THAT(v.status().message(), Catch::Contains("'t5'"));
  }
  SECTION("no tokens") {
    GgufWriter w;
    REQUIRE(w.set_string("tokenizer.ggml.model", "llama").ok());
    const auto v = load(w);
    REQUIRE_FALSE(v.ok());
    CHECK_THAT(v.status().message(), Catch::Contains("tokenizer.ggml.tokens"));
  }
  SECTION("a token type outside 0..6") {
    GgufWriter w = tiny_spm_writer();
    const std::vector<int64_t> types = {2, 3, 3, 1, 42};
    REQUIRE(w.set_array_ints("tokenizer.ggml.token_type", ValueType::INT32, types).ok());
    const auto v = load(w);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code() == StatusCode::format);
    CHECK_THAT(v.status().message(), Catch::Contains("42"));
  }
  SECTION("fewer scores than tokens") {
    GgufWriter w = tiny_spm_writer();
    const std::vector<double> scores = {0, 0};
    REQUIRE(w.set_array_numbers("tokenizer.ggml.scores", ValueType::FLOAT32, scores).ok());
    const auto v = load(w);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code() == StatusCode::format);
  }
  SECTION("a bos id past the end") {
    GgufWriter w = tiny_spm_writer();
    REQUIRE(w.set_u32("tokenizer.ggml.bos_token_id", 5).ok());
    const auto v = load(w);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code() == StatusCode::format);
    CHECK_THAT(v.status().message(), Catch::Contains("bos"));
  }
  SECTION("a flag of the wrong type") {
    GgufWriter w = tiny_spm_writer();
    REQUIRE(w.set_u32("tokenizer.ggml.add_space_prefix", 1).ok());
    const auto v = load(w);
    REQUIRE_FALSE(v.ok());
    CHECK_THAT(v.status().message(), Catch::Contains("add_space_prefix"));
  }
}

TEST_CASE("LES's synthetic SPM vocabulary round-trips text through GGUF and the SPM tokenizer", "[vocab]") {
  const auto sv = les::learn_spm_vocab(les::default_vocab_text(), 600);
  INFO(sv.status().to_string());
  REQUIRE(sv.ok());
  GgufWriter w;
  REQUIRE(w.set_string("tokenizer.ggml.model", "llama").ok());
  REQUIRE(w.set_array_strings("tokenizer.ggml.tokens", sv->tokens).ok());
  const std::vector<double> scores(sv->scores.begin(), sv->scores.end());
  REQUIRE(w.set_array_numbers("tokenizer.ggml.scores", ValueType::FLOAT32, scores).ok());
  const std::vector<int64_t> types(sv->types.begin(), sv->types.end());
  REQUIRE(w.set_array_ints("tokenizer.ggml.token_type", ValueType::INT32, types).ok());
  const std::vector<uint8_t> image = w.write_to_memory();
  auto file = les::gguf::GgufFile::parse(image.data(), image.size());
  REQUIRE(file.ok());
  auto tok = les::Tokenizer::from_gguf(**file);
  INFO(tok.status().to_string());
  REQUIRE(tok.ok());

  const std::string text(les::default_vocab_text());
  const auto ids = (*tok)->tokenize(text, true, false);
  REQUIRE(ids.ok());
  CHECK((*ids)[0] == 1);
  // Learned merges make the text much shorter than one token per byte.
  CHECK(ids->size() < text.size() / 2);
  const auto back = (*tok)->detokenize(*ids);
  REQUIRE(back.ok());
  CHECK(*back == text);
  // Text outside the training alphabet goes through byte fallback.
  const std::string other = "\xE6\x9D\xB1 #~ \xF0\x9F\x9A\x80";
  const auto ids2 = (*tok)->tokenize(other, false, false);
  REQUIRE(ids2.ok());
  CHECK(*(*tok)->detokenize(*ids2) == other);
}
