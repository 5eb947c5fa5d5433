// `les tokenize` end to end: the built tool gives llama.cpp's prompt token ids
// for the trained (SPM) and synthetic qwen3moe (BPE) fixtures, and fails
// cleanly on a missing file and an unsupported (bert) tokenizer.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::read_file;
using les::test::run_les;
using les::test::sh_quote;

namespace {

void check_reference_ids(const std::string& model_rel, const std::string& json_rel) {
  LES_REQUIRE_FIXTURE(model, model_rel);
  LES_REQUIRE_FIXTURE(json_path, json_rel);
  const auto ref = nlohmann::json::parse(read_file(json_path));
  for (const auto& p : ref["prompts"]) {
    std::string expected;
    for (const int id : p["tokens_model"]) {
      if (!expected.empty()) expected += ' ';
      expected += std::to_string(id);
    }
    const RunResult r = run_les("tokenize --ids " + sh_quote(model) + " " + sh_quote(p["text"].get<std::string>()));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == expected + "\n");
  }
}

}  // namespace

TEST_CASE("les tokenize: prompt ids equal llama.cpp's", "[cli]") {
  SECTION("trained tiny-qwen3moe (SPM)") {
    check_reference_ids("trained/tiny-qwen3moe-F16.gguf", "trained/reference/tiny-qwen3moe-F16.json");
  }
  SECTION("synthetic qwen3moe (BPE)") {
    check_reference_ids("synthetic/qwen3moe-F16.gguf", "synthetic/reference/qwen3moe-F16.json");
  }
}

TEST_CASE("les tokenize: the table lists id, type and piece", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-F16.gguf");
  const RunResult r = run_les("tokenize " + sh_quote(model) + " 'It'");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("2 tokens (llama model"));
  CHECK_THAT(r.out, Catch::Contains("control") && Catch::Contains("\"<s>\""));
  CHECK_THAT(r.out, Catch::Contains("\" It\""));
}

TEST_CASE("les tokenize: errors exit non-zero with a message", "[cli]") {
  const RunResult missing = run_les("tokenize /nonexistent/model.gguf hello");
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, Catch::Contains("les tokenize:"));
  CHECK(run_les("tokenize").exit_code != 0);
}

TEST_CASE("les tokenize: no TEXT and no -f is a usage error; an empty TEXT is text", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-F16.gguf");
  const RunResult none = run_les("tokenize " + sh_quote(model));
  CHECK(none.exit_code == 2);
  CHECK(none.out.empty());
  CHECK_THAT(none.err, Catch::Contains("les tokenize: give TEXT or -f FILE"));
  const RunResult both = run_les("tokenize " + sh_quote(model) + " hi -f - < /dev/null");
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Catch::Contains("not both"));
  const RunResult empty = run_les("tokenize --ids " + sh_quote(model) + " ''");
  CHECK(empty.exit_code == 0);
  CHECK(empty.out == "1\n");  // BOS only
}

TEST_CASE("les tokenize: a WordPiece vocabulary, and the warning for a missing pre-tokenizer", "[cli]") {
  LES_REQUIRE_FIXTURE(bert, "tokenizer/ggml-vocab-bert-bge.gguf");
  const RunResult wpm = run_les("tokenize --ids --no-special " + sh_quote(bert) + " 'Hello World!'");
  CHECK(wpm.exit_code == 0);
  CHECK(wpm.out == "7592 2088 999\n");  // llama-tokenize's ids
  LES_REQUIRE_FIXTURE(neox, "tokenizer/ggml-vocab-gpt-neox.gguf");
  const RunResult r = run_les("tokenize --ids --no-special " + sh_quote(neox) + " \"don't 12345\"");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "9903 8 85 209 10683 1857\n");  // llama-tokenize's ids
  CHECK_THAT(r.err, Catch::Contains("les tokenize: warning: tokenizer.ggml.pre is missing"));
}
