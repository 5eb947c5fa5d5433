// An interrupted long job removes its temporary file: `les synth` (and `les
// repack`, through the same RemoveOnInterrupt) killed with SIGINT or SIGTERM
// while OUT.tmp is being written leaves neither OUT.tmp nor OUT, and ends as
// interrupted (exit status 128 + signal).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::sh_quote;

namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// Starts `les synth --preset qwen3-30b-a3b -o OUT` (13 GB: still writing when
// the signal comes), sends `sig` once OUT.tmp exists,
// returns the shell's exit status of the tool.
int interrupted_synth(const std::string& out, const char* sig) {
  const std::string tmp = out + ".tmp";
  const std::string script = sh_quote(les::test::les_binary()) + " synth --preset qwen3-30b-a3b -q -o " + sh_quote(out) +
                             " 2>/dev/null & pid=$!; for i in $(seq 1 600); do [ -e " + sh_quote(tmp) +
                             " ] && break; sleep 0.05; done; kill -" + sig + " $pid; wait $pid";
  const int status = std::system(("sh -c " + sh_quote(script)).c_str());
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("an interrupted les synth removes OUT.tmp", "[cli]") {
  const std::string out = les::test::temp_dir() + "/interrupted-30b.gguf";
  CHECK(interrupted_synth(out, "INT") == 128 + SIGINT);
  CHECK_FALSE(exists(out + ".tmp"));
  CHECK_FALSE(exists(out));
  CHECK(interrupted_synth(out, "TERM") == 128 + SIGTERM);
  CHECK_FALSE(exists(out + ".tmp"));
}
