// The everyday flags of the `les` tool: --version, an unknown subcommand,
// prompts from files and stdin (-f), --json, --kv-type, --weights, and the warnings for a
// context beyond the training length and threads beyond the cores.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

namespace {

const char* kPrompt = "CHAPTER XII.\nIn the year 1794, Emily";

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = les::test::temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST_CASE("les --version and les version print the library version", "[cli]") {
  for (const char* args : {"--version", "version"}) {
    const RunResult r = run_les(args);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("les 0.") && Catch::Contains("kernels: "));
    // What this build reads experts with, and whether O_DIRECT is available (issue 36).
    CHECK_THAT(r.out, Catch::Contains("expert reads: ") && Catch::Contains("pread") && Catch::Contains("O_DIRECT"));
  }
}

TEST_CASE("an unknown subcommand names the known ones and exits 2", "[cli]") {
  const RunResult r = run_les("rn -p hi");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown command 'rn'") && Catch::Contains("run") &&
                        Catch::Contains("inspect") && Catch::Contains("tokenize"));
}

TEST_CASE("les run -f FILE and -f - give the same text as -p (one trailing newline removed)", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string base = "run -m " + sh_quote(model) + " --temp 0 -n 12 ";
  const RunResult p = run_les(base + "-p " + sh_quote(kPrompt));
  REQUIRE(p.exit_code == 0);
  const std::string file = write_temp("prompt.txt", std::string(kPrompt) + "\n");
  const RunResult f = run_les(base + "-f " + sh_quote(file));
  CHECK(f.exit_code == 0);
  CHECK(f.out == p.out);
  const RunResult in = run_les(base + "-f - < " + sh_quote(file));
  CHECK(in.exit_code == 0);
  CHECK(in.out == p.out);
  // Only one newline goes: a second one is part of the prompt (one token more).
  const std::string two = write_temp("prompt2.txt", std::string(kPrompt) + "\n\n");
  const RunResult f2 = run_les(base + "-f " + sh_quote(two));
  CHECK_THAT(f2.err, Catch::Contains("prompt tokens 17"));
  CHECK_THAT(p.err, Catch::Contains("prompt tokens 16"));

  const RunResult missing = run_les(base + "-f /nonexistent/prompt.txt");
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, Catch::Contains("/nonexistent/prompt.txt"));
  CHECK(run_les(base + "-f " + sh_quote(file) + " -p x").exit_code == 2);  // one source only
}

TEST_CASE("les run --json prints one object with the text and the summary figures", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string base = "run -m " + sh_quote(model) + " --temp 0 -n 12 -p " + sh_quote(kPrompt);
  const RunResult plain = run_les(base);
  const RunResult r = run_les(base + " --json --budget-mb 2");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["text"] == plain.out);  // the same greedy text, streamed experts or not
  CHECK(j["prompt_tokens"] == 16);
  CHECK(j["generated"] == 12);
  CHECK(j["stop"] == "n_predict");
  CHECK(j["decode_tok_per_s"].get<double>() > 0);
  CHECK(j["forward_tok_per_s"].get<double>() >= j["decode_tok_per_s"].get<double>());  // a part of the loop
  CHECK(j["forward_ms"].get<double>() <= j["decode_ms"].get<double>());
  CHECK(j["peak_rss_mib"].get<double>() > 0);
  CHECK(j["stream"]["hit_rate"].is_number());
  CHECK(j["stream"]["layers"].size() == 8);
  // The stable stderr lines are still there.
  CHECK_THAT(r.err, Catch::Contains("les run: prompt tokens 16, generated 12 (stop: n_predict)") &&
                        Catch::Contains("les run: peak RSS"));
  const auto resident = nlohmann::json::parse(run_les(base + " --json").out);
  CHECK(resident["stream"].is_null());
}

TEST_CASE("les run --kv-type q8_0 runs; a bad type is a usage error", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string base = "run -m " + sh_quote(model) + " --temp 0 -n 8 -p " + sh_quote(kPrompt);
  const RunResult q = run_les(base + " --kv-type q8_0");
  CHECK(q.exit_code == 0);
  CHECK_FALSE(q.out.empty());
  const RunResult bad = run_les(base + " --kv-type q4_0");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--kv-type"));
}

TEST_CASE("les run --weights auto|mmap|read and --no-mmap give the same text; bad values are usage errors",
          "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string base = "run -m " + sh_quote(model) + " --temp 0 -n 8 -p " + sh_quote(kPrompt);
  const RunResult ref = run_les(base);
  REQUIRE(ref.exit_code == 0);
  for (const char* flags : {" --weights mmap", " --weights read", " --no-mmap", " --weights auto --mlock",
                            " --no-mmap --budget-mb 64"}) {
    INFO(flags);
    const RunResult r = run_les(base + flags);
    CHECK(r.exit_code == 0);
    CHECK(r.out == ref.out);
  }
  const RunResult bad = run_les(base + " --weights mapped");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--weights"));
  CHECK(run_les(base + " --weights mmap --no-mmap").exit_code == 2);  // one or the other
}

TEST_CASE("les run --no-mmap --budget-mb streams the experts without reading them all into memory", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string base = "run -m " + sh_quote(model) + " --temp 0 -n 4 -p " + sh_quote(kPrompt);
  // The fixture's routed experts: 8 layers x 32 experts x 3 matrices of 256 x 64 Q4_K
  // (144 bytes per 256 weights) = 7.1 MiB. Read into memory as well as streamed they would
  // raise the peak by that much over the default (--weights auto) with the same budget;
  // streamed only, the two peaks differ by the runs' noise (a few tenths of a MiB), far
  // below half of it.
  const double experts_mib = 8.0 * 32 * 3 * 256 * 64 * 144 / 256 / (1024.0 * 1024.0);
  const RunResult with_auto = run_les(base + " --budget-mb 4");
  const RunResult with_read = run_les(base + " --no-mmap --budget-mb 4");
  REQUIRE(with_auto.exit_code == 0);
  REQUIRE(with_read.exit_code == 0);
  CHECK(with_read.out == with_auto.out);
  const double peak_auto = les::test::number_after(with_auto.err, "peak RSS ");
  const double peak_read = les::test::number_after(with_read.err, "peak RSS ");
  INFO("peak RSS MiB: --budget-mb 4 " << peak_auto << ", --no-mmap --budget-mb 4 " << peak_read);
  CHECK(peak_read < peak_auto + experts_mib / 2);
}

TEST_CASE("an empty option value is a usage error naming the flag", "[cli]") {
  struct Case {
    const char* args;
    const char* flag;
  };
  for (const Case& c : {Case{"run -n ''", "--n-predict"}, Case{"run --mem-limit-mb ''", "--mem-limit-mb"},
                        Case{"run --budget-mb ''", "--budget-mb"}, Case{"run --draft ''", "--draft"},
                        Case{"run -m ''", "--model"}, Case{"run -f ''", "--file"},
                        Case{"chat --chat-template ''", "--chat-template"}, Case{"bench -r ''", "--repetitions"},
                        Case{"bench -p ''", "--n-prompt"}, Case{"inspect ''", "file"}}) {
    const RunResult r = run_les(c.args);
    INFO(c.args << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(std::string(c.flag) + ": empty value"));
  }
}

TEST_CASE("les run warns about a context beyond the training length and threads beyond the cores", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");  // trained with n_ctx 256
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const RunResult r = run_les("run -m " + sh_quote(model) + " --temp 0 -n 2 -c 512 -t " + std::to_string(cores + 1));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("warning: n_ctx 512 is beyond the model's training context (256 tokens)"));
  CHECK_THAT(r.err, Catch::Contains("warning: -t " + std::to_string(cores + 1) + " is more threads"));
  const RunResult quiet = run_les("run -m " + sh_quote(model) + " --temp 0 -n 2 -c 256 -t 1");
  CHECK_THAT(quiet.err, !Catch::Contains("warning"));
}

TEST_CASE("les tokenize: pieces are printed as text; -f reads the text from a file", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "synthetic/qwen3moe-F16.gguf");
  const RunResult r = run_les("tokenize " + sh_quote(model) + " " + sh_quote("héllo\tok"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"é\"") && Catch::Contains("\"\\t\""));
  const std::string file = write_temp("tok.txt", "héllo\tok\n");
  const RunResult f = run_les("tokenize " + sh_quote(model) + " -f " + sh_quote(file));
  CHECK(f.exit_code == 0);
  CHECK(f.out == r.out);
}
