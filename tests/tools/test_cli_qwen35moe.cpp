// `les run` on every qwen35moe fixture (hybrid Gated DeltaNet + gated
// attention, shared expert; one with an MTP block): resident, and with the
// routed experts streamed through a 1 MiB and a 4 MiB cache (the smallest
// budget of every fixture is below 1 MiB), the greedy text is the same; so is
// the repacked (contiguous) copy streamed through 1 MiB.
#include <catch2/catch.hpp>

#include <string>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

TEST_CASE("les run on qwen35moe: streamed text equals resident text", "[cli]") {
  for (const char* f : {"synthetic/qwen35moe-F16.gguf", "synthetic/qwen35moe-Q4_K_M.gguf",
                        "synthetic/qwen35moe-MIXED.gguf", "synthetic/qwen35moe-mtp-F16.gguf"}) {
    LES_REQUIRE_FIXTURE(path, f);
    INFO(f);
    const std::string args = "run -m " + sh_quote(path) + " -p 'The quick brown fox' -n 16 --temp 0 --ignore-eos";
    const RunResult resident = run_les(args);
    INFO(resident.err);
    REQUIRE(resident.exit_code == 0);
    CHECK_FALSE(resident.out.empty());
    CHECK(resident.err.find("qwen35moe 4L") != std::string::npos);
    for (const char* mb : {"1", "4"}) {
      const RunResult streamed = run_les(args + " --budget-mb " + mb + " --stats");
      INFO("budget " << mb << " MiB: " << streamed.err);
      REQUIRE(streamed.exit_code == 0);
      CHECK(streamed.out == resident.out);
      CHECK(streamed.err.find("hit rate") != std::string::npos);
    }
  }
}

TEST_CASE("les run on a repacked qwen35moe file streams the same text", "[cli]") {
  LES_REQUIRE_FIXTURE(src, "synthetic/qwen35moe-Q4_K_M.gguf");
  const std::string out = les::test::temp_dir() + "/qwen35moe-Q4_K_M.contiguous.gguf";
  const RunResult rp = run_les("repack " + sh_quote(src) + " " + sh_quote(out));
  INFO(rp.err);
  REQUIRE(rp.exit_code == 0);
  const std::string gen = " -p 'The quick brown fox' -n 16 --temp 0 --ignore-eos";
  const RunResult a = run_les("run -m " + sh_quote(src) + gen);
  const RunResult b = run_les("run -m " + sh_quote(out) + gen + " --budget-mb 1");
  INFO(b.err);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out == b.out);
}
