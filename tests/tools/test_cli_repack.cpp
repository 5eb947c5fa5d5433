// `les repack` and `les synth` presets end to end: the built tool repacks the
// trained fixture (verified), `les run` prints the same greedy text on both
// layouts (resident and streamed under a small budget), and bad inputs exit
// non-zero with a message instead of crashing.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::read_file;
using les::test::run_les;
using les::test::sh_quote;

TEST_CASE("les repack: the trained fixture, verified; les run gives the same text on both layouts", "[cli]") {
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf");
  const std::string out = les::test::temp_dir() + "/mixed.contiguous.gguf";
  auto r = run_les("repack " + sh_quote(src) + " " + sh_quote(out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("verified 256 experts") != std::string::npos);
  auto v = run_les("repack --verify-only " + sh_quote(src) + " " + sh_quote(out));
  CHECK(v.exit_code == 0);
  CHECK(v.err.find("256 experts and every other tensor identical") != std::string::npos);
  // Another file of the same shape: the report names the first key whose value differs
  // (the two files hold the same keys; the Q3_K file's general.file_type is not F16's),
  // not a key both files hold with the same value.
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  auto other = run_les("repack --verify-only " + sh_quote(f16) + " " + sh_quote(out));
  CHECK(other.exit_code == 1);
  CHECK_THAT(other.err, Catch::Contains("metadata key 'general.file_type' has another value"));

  const std::string gen = " -p 'Once upon a time' -n 24 --temp 0 -t 2";
  auto a = run_les("run -m " + sh_quote(src) + gen);
  auto b = run_les("run -m " + sh_quote(out) + gen);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK_FALSE(a.out.empty());
  CHECK(a.out == b.out);
  // Streaming under a small budget reads the contiguous blobs (one read per expert).
  auto c = run_les("run -m " + sh_quote(out) + gen + " --budget-mb 4");
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(c.out == a.out);
}

TEST_CASE("les repack: bad inputs and outputs exit non-zero with a message", "[cli]") {
  const std::string dir = les::test::temp_dir();
  auto missing = run_les("repack " + sh_quote(dir + "/nope.gguf") + " " + sh_quote(dir + "/o.gguf"));
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("nope.gguf") != std::string::npos);

  // A non-GGUF file is a format error (exit 1). (Dense and truncated inputs: tests/core/gguf/test_expert_repack.cpp.)
  {
    std::ofstream(dir + "/garbage.gguf") << "definitely not a GGUF file";
    auto g = run_les("repack " + sh_quote(dir + "/garbage.gguf") + " " + sh_quote(dir + "/o.gguf"));
    CHECK(g.exit_code == 1);
    CHECK(g.err.find("garbage.gguf") != std::string::npos);
  }
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
  auto unwritable = run_les("repack " + sh_quote(src) + " " + sh_quote(dir + "/no/such/dir/o.gguf"));
  CHECK(unwritable.exit_code == 1);
  CHECK(unwritable.err.find("no/such/dir/o.gguf") != std::string::npos);
  auto same = run_les("repack " + sh_quote(src) + " " + sh_quote(src));
  CHECK(same.exit_code == 2);
  CHECK(same.err.find("same file") != std::string::npos);
  auto usage = run_les("repack " + sh_quote(src));
  CHECK(usage.exit_code != 0);
}

TEST_CASE("les synth: small preset and type / generator options", "[cli]") {
  const std::string out = les::test::temp_dir() + "/synth-small.gguf";
  auto r = run_les("synth --preset small -q -o " + sh_quote(out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("experts Q4_K") != std::string::npos);
  CHECK(r.err.find("block_pool generator") != std::string::npos);
  CHECK(r.err.find("MB/s") != std::string::npos);
  CHECK(read_file(out).substr(0, 4) == "GGUF");
  auto bad_type = run_les("synth --preset small --expert-type q9_z -o " + sh_quote(out));
  CHECK(bad_type.exit_code == 2);
  CHECK(bad_type.err.find("q9_z") != std::string::npos);
  auto bad_gen = run_les("synth --preset small --generator magic -o " + sh_quote(out));
  CHECK(bad_gen.exit_code == 2);
  CHECK(bad_gen.err.find("magic") != std::string::npos);
}
