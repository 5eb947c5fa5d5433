// A model file truncated under a resident `les run` (issue 36): with the
// default --weights auto a resident context reads its experts through a
// mapping of the file, and the next touch of a lost page raised SIGBUS, which
// killed the tool with no message (exit 135 from the shell, nothing on
// stderr). The tool's SIGBUS handler (sigbus_report.h) now names the file and
// the way out, and exits 135.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "support/child_process.h"
#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::ChildProcess;
using les::test::ChildOptions;

TEST_CASE("les run: a model file truncated under a resident run is named, exit 135", "[cli][files]") {
  LES_REQUIRE_FIXTURE(fixture, "trained/tiny-qwen3moe-F16.gguf");
  const std::string path = les::test::temp_dir() + "/truncated-under-run.gguf";
  std::filesystem::copy_file(fixture, path, std::filesystem::copy_options::overwrite_existing);
  ChildOptions opts;
  opts.stdout_full = true;  // the first text blocks the run: the test truncates meanwhile
  ChildProcess child({les::test::les_binary(), "run", "-m", path, "--temp", "0", "-n", "200", "--ignore-eos", "-t",
                      "1", "-p", "The castle stood upon a rock, and the"},
                     opts);
  REQUIRE(child.wait_blocked_writing_stdout(120));
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  REQUIRE(::truncate(path.c_str(), st.st_size / 4) == 0);  // the experts' pages are gone
  REQUIRE(child.wait(120));
  INFO("stderr: " << child.err());
  CHECK(child.term_signal() == 0);  // handled: a message, then exit
  CHECK(child.exit_code() == 128 + SIGBUS);
  CHECK(child.err().find("les run: SIGBUS: the memory-mapped file '" + path + "' was truncated or replaced") !=
        std::string::npos);
  CHECK(child.err().find("--weights read") != std::string::npos);
  std::filesystem::remove(path);
}
