// `les run --lookup [N] / --draft MODEL / --mtp / --draft-max D` end to end on
// the trained fixture (--mtp: the synthetic qwen35moe file with an MTP block;
// a model without one fails naming it): the greedy text equals the plain run's (resident and
// streamed), --stats prints the speculative totals, --json carries them; bad
// values exit 2 naming the flag before any file is opened, a missing --draft
// file exits 1 naming it, a draft model with another vocabulary exits 2
// naming the difference. `les chat` takes the same flags with the same
// parsing and errors, and its answers equal the plain chat's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

namespace {
// A passage quoted back: prompt lookup has something to copy.
const char* kPrompt =
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of "
    "a wife. Repeat: It is a truth universally acknowledged,";
}  // namespace

TEST_CASE("les run / les chat --lookup / --draft: bad values exit 2 naming the flag", "[cli]") {
  struct Case {
    const char* args;
    const char* mentions;
  };
  for (const Case& c : {Case{"--lookup 0", "--lookup"}, Case{"--lookup 17", "--lookup"}, Case{"--lookup -3", "--lookup"},
                        Case{"--lookup abc", "--lookup"}, Case{"--lookup 3x", "--lookup"},
                        Case{"--lookup 99999999999999999999", "--lookup"}, Case{"--lookup 2 --draft x.gguf", "--draft"},
                        Case{"--lookup --draft-max 0", "--draft-max"}, Case{"--lookup --draft-max -1", "--draft-max"},
                        Case{"--lookup --draft-max 65", "--draft-max"},
                        Case{"--lookup --draft-max 2147483647", "--draft-max"},
                        Case{"--lookup --draft-max 1e9", "--draft-max"},
                        Case{"--draft x.gguf --draft-max 100000", "--draft-max"}, Case{"--draft ''", "--draft"},
                        Case{"--lookup --mtp", "--lookup and --mtp are two drafters"},
                        Case{"--lookup --draft-min -1", "--draft-min"},
                        Case{"--lookup --draft-max 4 --draft-min 5", "--draft-min"},
                        Case{"--draft x.gguf --mtp", "--draft and --mtp are two drafters"}}) {
    for (const char* tool : {"run", "chat"}) {
      INFO(tool << " " << c.args);
      auto r = run_les(std::string(tool) + " -m /nonexistent.gguf " + c.args + " < /dev/null");
      CHECK(r.exit_code == 2);
      CHECK(r.err.find(c.mentions) != std::string::npos);
    }
  }
}

TEST_CASE("les run --draft: a missing file exits 1, another vocabulary exits 2, naming them", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(other, "synthetic/qwen3moe-Q4_K_M.gguf");
  const std::string base = "run -m " + sh_quote(model) + " -n 4 --temp 0 ";
  auto missing = run_les(base + "--draft /nonexistent/draft.gguf");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("--draft") != std::string::npos);
  CHECK(missing.err.find("/nonexistent/draft.gguf") != std::string::npos);
  CHECK(std::count(missing.err.begin(), missing.err.end(), '\n') == 1);  // one error line, not the log's too
  CHECK(missing.out.empty());
  auto vocab = run_les(base + "--draft " + sh_quote(other));
  CHECK(vocab.exit_code == 2);
  CHECK(vocab.err.find("--draft") != std::string::npos);
  CHECK(vocab.err.find("vocabulary") != std::string::npos);
  CHECK(vocab.out.empty());
}

TEST_CASE("les run --lookup / --draft: greedy text equals plain, with statistics", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(draft, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string base = "run -m " + sh_quote(model) + " -p " + sh_quote(kPrompt) + " -n 48 --temp 0 --ignore-eos -t 2";
  const RunResult plain = run_les(base);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(plain.out.size() > 40);
  for (const std::string& extra : std::vector<std::string>{
           " --lookup --stats", " --lookup 2 --draft-max 4 --stats", " --lookup --draft-max 4 --draft-min 4 --stats", " --draft " + sh_quote(draft) + " --stats",
        " --lookup --budget-mb 2 --stats", " --draft " + sh_quote(draft) + " --draft-max 3 --budget-mb 2 --stats"}) {
    INFO(extra);
    const RunResult r = run_les(base + extra);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == plain.out);
    CHECK(r.err.find("speculative decoding: ") != std::string::npos);
    CHECK(r.err.find("les run: speculative: target passes ") != std::string::npos);
    CHECK(r.err.find("tokens per target pass") != std::string::npos);
    CHECK(r.err.find("bytes per token") != std::string::npos);
    CHECK(r.err.find("decode ") != std::string::npos);
  }
  // --json: the same text and the totals as numbers.
  const RunResult j = run_les(base + " --lookup --json");
  REQUIRE(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["text"] == plain.out);
  const auto& s = doc["speculative"];
  REQUIRE(s.is_object());
  CHECK(s["target_passes"].get<int>() > 0);
  CHECK(s["pass_tokens"].get<int>() == doc["decode_tokens"].get<int>());
  CHECK(s["accepted"].get<int>() <= s["verified"].get<int>());
  CHECK(s["verified"].get<int>() <= s["drafted"].get<int>());
  const RunResult pj = run_les(base + " --json");
  REQUIRE(pj.exit_code == 0);
  CHECK(nlohmann::json::parse(pj.out)["speculative"].is_null());
}

TEST_CASE("les chat --lookup / --draft: the answers equal the plain chat's; /stats has the totals", "[cli][chat]") {
  // The synthetic qwen3moe fixtures: ChatML control tokens, and a Q4_K_M copy
  // with the same vocabulary to draft with.
  LES_REQUIRE_FIXTURE(model, "synthetic/qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(draft, "synthetic/qwen3moe-Q4_K_M.gguf");
  const std::string input = les::test::temp_dir() + "/chat-speculative-in.txt";
  // The second turn quotes the first, so prompt lookup finds something to copy.
  std::ofstream(input, std::ios::binary) << "Hello there, how are you today?\n"
                                            "Hello there, how are you today? Hello there\n/stats\n";
  const std::string base = "chat -m " + sh_quote(model) + " --temp 0 -n 24 --ignore-eos -t 2";
  const RunResult plain = run_les(base + " < " + sh_quote(input));
  REQUIRE(plain.exit_code == 0);
  REQUIRE(plain.out.size() > 4);
  CHECK(plain.err.find("speculative") == std::string::npos);
  for (const std::string& extra :
       std::vector<std::string>{" --lookup", " --lookup 2 --draft-max 3", " --draft " + sh_quote(draft) + " --draft-max 4",
                                " --lookup --budget-mb 1"}) {
    INFO(extra);
    const RunResult r = run_les(base + extra + " < " + sh_quote(input));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == plain.out);
    CHECK(r.err.find("les chat: speculative decoding: ") != std::string::npos);
    CHECK(r.err.find("les chat: speculative: target passes ") != std::string::npos);  // from /stats
  }
  // A missing draft file exits 1 naming it; another vocabulary exits 2.
  LES_REQUIRE_FIXTURE(other, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const RunResult missing = run_les(base + " --draft /nonexistent/draft.gguf < /dev/null");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("/nonexistent/draft.gguf") != std::string::npos);
  const RunResult vocab = run_les(base + " --draft " + sh_quote(other) + " < /dev/null");
  CHECK(vocab.exit_code == 2);
  CHECK(vocab.err.find("vocabulary") != std::string::npos);
}

TEST_CASE("les run --mtp: greedy text equals plain; a model without an MTP head is refused", "[cli][mtp]") {
  LES_REQUIRE_FIXTURE(model, "synthetic/qwen35moe-mtp-F16.gguf");
  LES_REQUIRE_FIXTURE(no_head, "synthetic/qwen35moe-F16.gguf");
  const std::string base = "run -m " + sh_quote(model) + " -p " + sh_quote(kPrompt) + " -n 24 --temp 0 --ignore-eos -t 2";
  const RunResult plain = run_les(base);
  REQUIRE(plain.exit_code == 0);
  const RunResult r = run_les(base + " --mtp --draft-max 3 --stats");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == plain.out);
  CHECK(r.err.find("speculative decoding: the model's MTP head, draft-max 3") != std::string::npos);
  CHECK(r.err.find("les run: speculative: target passes ") != std::string::npos);
  const RunResult bad = run_les("run -m " + sh_quote(no_head) + " -p hello -n 4 --temp 0 --mtp");
  INFO(bad.err);
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("no MTP") != std::string::npos);
  CHECK(bad.err.find("qwen35moe") != std::string::npos);
  CHECK(bad.out.empty());
}
