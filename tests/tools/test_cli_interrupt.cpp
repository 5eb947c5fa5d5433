// An interrupted long job removes its temporary file: `les synth` and `les
// repack` (InterruptScope, OnSignal::exit_at_once) killed with SIGINT, SIGTERM
// or SIGHUP while OUT.tmp is being written (repack: or verified) leave neither
// OUT.tmp nor OUT, say so, and end as interrupted (exit status 128 + signal).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdio>
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

TEST_CASE("an interrupted les repack leaves neither OUT nor OUT.tmp, during the writing or the verification",
          "[cli]") {
  LES_REQUIRE_FIXTURE(f16, "synthetic/qwen3moe-F16.gguf");
  const std::string out = les::test::temp_dir() + "/interrupted-repack.gguf";
  const std::string tmp = out + ".tmp";
  const std::string err = out + ".err";
  int interrupted = 0;
  // The signal lands at increasing delays after OUT.tmp appears: while writing, while verifying
  // (the old code had renamed OUT.tmp to OUT before verifying it), or after the end.
  for (const char* delay : {"0", "0.05", "0.1", "0.15", "0.2", "0.3", "0.5"}) {
    for (const char* sig : {"INT", "HUP"}) {
      INFO("signal " << sig << " " << delay << " s after OUT.tmp appeared");
      std::remove(out.c_str());
      const std::string script = sh_quote(les::test::les_binary()) + " repack " + sh_quote(f16) + " " +
                                 sh_quote(out) + " 2>" + sh_quote(err) + " & pid=$!; for i in $(seq 1 600); do [ -e " +
                                 sh_quote(tmp) + " ] && break; sleep 0.01; done; sleep " + delay + "; kill -" + sig +
                                 " $pid 2>/dev/null; wait $pid";
      const int status = std::system(("sh -c " + sh_quote(script)).c_str());
      REQUIRE(WIFEXITED(status));
      const int code = WEXITSTATUS(status);
      CHECK_FALSE(exists(tmp));
      // Finished first: verified, under its name. The signal can also land after the file was
      // written and reported, while the process exits (the default action then ends it with
      // 128 + signal): the output is complete either way.
      // Or between the rename of OUT.tmp to OUT and that report: the note then says OUT was written.
      const std::string said = les::test::read_file(err);
      if (code != 0 && said.find("interrupted after " + out + " was written") != std::string::npos) {
        CHECK(code == 128 + (std::string(sig) == "INT" ? SIGINT : SIGHUP));
        CHECK(exists(out));
        CHECK(said.find("not written") == std::string::npos);
        continue;
      }
      if (code == 0 || said.find("les repack: wrote ") != std::string::npos) {
        CHECK(exists(out));
        CHECK_THAT(les::test::read_file(err), Catch::Contains("verified"));
        continue;
      }
      ++interrupted;
      CHECK(code == 128 + (std::string(sig) == "INT" ? SIGINT : SIGHUP));
      CHECK_FALSE(exists(out));
      CHECK_THAT(les::test::read_file(err), Catch::Contains("les repack: interrupted; " + out + " not written"));
    }
  }
  CHECK(interrupted > 0);
  std::remove(out.c_str());
}
