// `les bench` end to end: the table and --json rows (one per threads x
// budget x test, every repetition's tok/s, streamed rows with their hit rate),
// and the usage errors (exit 2) and runtime errors (exit 1). Timings are not
// checked (tests assert behaviour; speeds are bench/'s business), only that
// they are positive and that mean and standard deviation follow from the
// repetitions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

TEST_CASE("les bench: table of pp and tg rows", "[cli]") {
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const RunResult r = run_les("bench -m " + sh_quote(q4) + " -p 16 -n 4 -r 2 -t 1");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("| model | size | experts | threads | test | t/s |"));
  CHECK_THAT(r.out, Catch::Contains("| qwen3moe 8L 256d 32x4 experts Q4_K |") &&
                        Catch::Contains("| resident | 1 | pp16 |") && Catch::Contains("| resident | 1 | tg4 |") &&
                        Catch::Contains(" ± "));
}

TEST_CASE("les bench --json: rows for every threads x budget x test", "[cli]") {
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const RunResult r = run_les("bench -m " + sh_quote(q4) + " -p 8 -n 3 -r 3 -t 1,2 --budget-mb 0,2 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 8);  // 2 thread counts x 2 budgets x 2 tests
  int streamed = 0;
  for (const auto& row : j) {
    INFO(row.dump());
    CHECK(row["repetitions"] == 3);
    REQUIRE(row["tok_per_s"].size() == 3);
    double sum = 0;
    for (const auto& v : row["tok_per_s"]) {
      CHECK(v.get<double>() > 0);
      sum += v.get<double>();
    }
    CHECK(row["avg_tok_per_s"].get<double>() == Approx(sum / 3));
    CHECK(row["stddev_tok_per_s"].get<double>() >= 0);
    const std::string test = row["test"];
    CHECK((test == "pp8" || test == "tg3"));
    CHECK(row["n_prompt"].get<int>() + row["n_gen"].get<int>() == (test == "pp8" ? 8 : 3));
    if (!row["expert_budget_mib"].is_null()) {
      ++streamed;
      CHECK(row["expert_budget_mib"].get<double>() == 2.0);
      CHECK(row["hit_rate"].get<double>() >= 0);
      CHECK(row["hit_rate"].get<double>() <= 1);
      CHECK(row["mib_read_per_token"].get<double>() >= 0);
    } else {
      CHECK(row["hit_rate"].is_null());
    }
  }
  CHECK(streamed == 4);
}

TEST_CASE("les bench: usage errors exit 2, runtime errors 1", "[cli]") {
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string m = "bench -m " + sh_quote(q4) + " ";
  for (const char* bad : {"-r 0", "-p -1", "-n -2", "-p 0 -n 0", "-p 300 -c 256", "--budget-mb -1", "-t -1",
                          "--kv-type q5", "--io floppy", "--prefetch-c -5", "--budget-mb 0.01", "--no-such-flag"}) {
    const RunResult r = run_les(m + bad);
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
  }
  const RunResult missing = run_les("bench -m /nonexistent.gguf -p 4 -n 0 -r 1");
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, Catch::Contains("/nonexistent.gguf"));
}

TEST_CASE("les bench: a dense model skips the streamed budgets with a note", "[cli]") {
  LES_REQUIRE_FIXTURE(dense, "synthetic/llama-dense-Q4_K_M.gguf");
  const RunResult r = run_les("bench -m " + sh_quote(dense) + " -p 4 -n 2 -r 1 -t 1 --budget-mb 0,8 --json");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("no routed experts"));
  CHECK(nlohmann::json::parse(r.out).size() == 2);
}

TEST_CASE("les bench: an empty list element is a usage error naming its flag", "[cli]") {
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string m = "bench -m " + sh_quote(q4) + " -r 1 ";
  for (const auto& [bad, flag] : std::vector<std::pair<std::string, std::string>>{
           {"-p 8,,4", "-p"}, {"-p 8,", "-p"}, {"-n ,3", "-n"}, {"-t 1,,2", "-t"}, {"--budget-mb 0,,2", "--budget-mb"},
           {"-p 8,x", "-p"}}) {
    const RunResult r = run_les(m + bad);
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::StartsWith("les bench: " + flag + ":"));
  }
}

TEST_CASE("les bench: every budget is checked before the first row runs", "[cli]") {
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  // The resident row (budget 0) would run first: a refusal of 0.01 MiB must come before it.
  const RunResult r = run_les("bench -m " + sh_quote(q4) + " -p 4 -n 2 -r 1 -t 1 --budget-mb 0,0.01");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("--budget-mb 0.01") && Catch::Contains("below the minimum"));
  CHECK_THAT(r.err, !Catch::Contains("tok/s"));  // no test ran
}

TEST_CASE("les bench: without -t the rows show the thread count used", "[cli]") {
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const RunResult j = run_les("bench -m " + sh_quote(q4) + " -p 0 -n 2 -r 1 --json");
  REQUIRE(j.exit_code == 0);
  const auto rows = nlohmann::json::parse(j.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["threads"].get<int>() == cores);
  const RunResult table = run_les("bench -m " + sh_quote(q4) + " -p 0 -n 2 -r 1");
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("| resident | " + std::to_string(cores) + " | tg2 |"));
  CHECK_THAT(table.err, Catch::Contains("tg2 -t " + std::to_string(cores) + " resident"));
}
