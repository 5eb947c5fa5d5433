// Usage errors and notes of the `les` tool that cut across subcommands:
// --seed over the whole uint64 range (and nothing else), numbers in decimal
// only, CLI11's messages prefixed like the tool's own, a repeated option
// taking its last value, sampler errors naming the flag, --help naming
// --version, bench's threads-beyond-cores warning, --json's stderr, and the
// note for a --budget-mb that holds every expert.
#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

namespace {

constexpr const char* kModel = "trained/tiny-qwen3moe-Q4_K_M.gguf";

}  // namespace

TEST_CASE("les run --seed takes 0 .. 2^64 - 1 and -1; anything else exits 2 naming --seed", "[cli]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string base = "run -m " + sh_quote(model) + " -n 6 --ignore-eos -p hi --seed ";
  // The largest replayable seed is printed as given, and replays: the same text twice.
  const RunResult a = run_les(base + "18446744073709551614");
  const RunResult b = run_les(base + "18446744073709551614");
  REQUIRE(a.exit_code == 0);
  CHECK_THAT(a.err, Catch::Contains("seed 18446744073709551614"));
  CHECK(a.out == b.out);
  // Seeds at or above 2^63 (les_generate_stats.seed reports such) replay too.
  const RunResult c = run_les(base + "9589972746193541845");
  REQUIRE(c.exit_code == 0);
  CHECK_THAT(c.err, Catch::Contains("seed 9589972746193541845"));
  CHECK(run_les(base + "0").exit_code == 0);
  // -1 and 2^64 - 1 (LES_SEED_RANDOM) draw a random seed.
  for (const char* random : {"-1", "18446744073709551615"}) {
    const RunResult r = run_les(base + random);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, !Catch::Contains(std::string("seed ") + random + ","));
  }
  for (const char* bad : {"18446744073709551616", "99999999999999999999", "-2", "0x10", "abc", "' 1'", "+1", "1.5"}) {
    const RunResult r = run_les(base + bad);
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::StartsWith("les run: --seed must be a whole number in 0..18446744073709551615"));
  }
}

TEST_CASE("numeric options take decimal numbers only, named in the error", "[cli]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string base = "run -m " + sh_quote(model) + " -n 2 -p hi ";
  for (const char* bad : {"--mem-limit-mb 0x10", "--budget-mb 1e3x", "-n 0x5", "-t 0b1", "--temp 1_0", "--ctx 1e"}) {
    const RunResult r = run_les(base + bad);
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("les run: --") && Catch::Contains("a decimal number expected"));
  }
  for (const char* good : {"--temp .5", "--temp 5e-1", "--mem-limit-mb 1024.5", "-n +2"})
    CHECK(run_les(base + good).exit_code == 0);
  const RunResult bench = run_les("bench -m " + sh_quote(model) + " -p 0x8 -n 0 -r 1");
  CHECK(bench.exit_code == 2);
  CHECK_THAT(bench.err, Catch::Contains("-p: '0x8' is not a number"));
}

TEST_CASE("CLI11's usage errors carry the tool's prefix; a repeated option takes its last value", "[cli]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const RunResult both = run_les("run -m " + sh_quote(model) + " -p a -f b");
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Catch::StartsWith("les run: --prompt excludes --file") && Catch::Contains("les run --help"));
  const RunResult none = run_les("inspect");
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::StartsWith("les inspect: "));
  const RunResult bare = run_les("");
  CHECK(bare.exit_code == 2);
  CHECK_THAT(bare.err, Catch::StartsWith("les: ") && Catch::Contains("les --help"));
  // -t above the maximum is refused: given first it is overridden, given last it counts.
  const std::string too_many = std::to_string(4 * std::max(1u, std::thread::hardware_concurrency()) + 1);
  const std::string base = "run -m " + sh_quote(model) + " -n 2 -p hi ";
  CHECK(run_les(base + "-t " + too_many + " -t 1").exit_code == 0);
  const RunResult last = run_les(base + "-t 1 -t " + too_many);
  CHECK(last.exit_code == 2);
  CHECK_THAT(last.err, Catch::Contains("-t " + too_many + " is above the maximum"));
}

TEST_CASE("sampler errors name the flag", "[cli]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::pair<const char*, const char*> cases[] = {{"--temp -1", "les run: --temp: "},
                                                       {"--top-p 0", "les run: --top-p: "},
                                                       {"--min-p 2", "les run: --min-p: "},
                                                       {"--top-k -3", "les run: --top-k: "},
                                                       {"--repeat-last-n -5", "les run: --repeat-last-n: "},
                                                       {"--repeat-penalty 0", "les run: --repeat-penalty: "}};
  for (const auto& [args, prefix] : cases) {
    const RunResult r = run_les("run -m " + sh_quote(model) + " -n 2 -p hi " + args);
    INFO(args << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith(prefix));
  }
}

TEST_CASE("les --help names --version; bench warns about threads beyond the cores", "[cli]") {
  const RunResult help = run_les("--help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("les --version (or les version)"));
  LES_REQUIRE_FIXTURE(model, kModel);
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0) return;
  const std::string t = std::to_string(cores + 1);
  const RunResult r = run_les("bench -m " + sh_quote(model) + " -p 4 -n 0 -r 1 -t " + t);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("les bench: warning: -t " + t + " is more threads than this machine's"));
}

TEST_CASE("les run --json: stderr holds only the summary lines (no blank line)", "[cli]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const RunResult r = run_les("run -m " + sh_quote(model) + " -n 3 -p hi --json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("\n\n") == std::string::npos);
  CHECK(r.err.rfind("\n", 0) != 0);
}

TEST_CASE("les run --budget-mb above every expert says they all fit", "[cli]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const RunResult r = run_les("run -m " + sh_quote(model) + " -n 2 -p hi --budget-mb 100000");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("les run: note: --budget-mb 100000.0 holds every routed expert (256 slots)") &&
                        Catch::Contains("experts streamed (budget 100000.0 MiB: every expert fits)"));
  const RunResult fits_not = run_les("run -m " + sh_quote(model) + " -n 2 -p hi --budget-mb 4");
  REQUIRE(fits_not.exit_code == 0);
  CHECK_THAT(fits_not.err, !Catch::Contains("every expert fits") && !Catch::Contains("holds every routed expert"));
}
