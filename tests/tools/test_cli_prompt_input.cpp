// Prompt files as a hostile user gives them (issue 36, defect 6): `les run -f
// /dev/zero` was OOM-killed, and a FIFO that never ends was read until memory
// ran out. A prompt file is now read up to 64 MiB (text_input.h), with a
// message beyond.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>

#include "support/cli_tool.h"
#include "support/fixtures.h"

namespace {

using les::test::run_les;
using les::test::sh_quote;

constexpr const char* kModel = "trained/tiny-qwen3moe-Q4_K_M.gguf";

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("les run / tokenize: /dev/zero, an endless FIFO and a huge sparse file are refused with a message",
          "[cli][files]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string m = sh_quote(model);
  // /dev/zero: read up to the limit, then refused (not OOM-killed).
  for (const char* cmd : {"run -n 1 -m ", "tokenize "}) {
    INFO(cmd);
    const auto r = run_les(std::string(cmd) + m + " -f /dev/zero");
    CHECK(r.exit_code == 1);
    CHECK(has(r.err, "prompt file '/dev/zero'"));
    CHECK(has(r.err, "64.0 MiB"));
  }
  // A 1 TiB sparse file: refused from its size, before reading.
  const std::string sparse = les::test::temp_dir() + "/huge.txt";
  {
    const int fd = ::open(sparse.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t{1} << 40) == 0);
    ::close(fd);
  }
  auto r = run_les("run -n 1 -m " + m + " -f " + sh_quote(sparse));
  CHECK(r.exit_code == 1);
  CHECK(has(r.err, "1024.0 GiB, more than the limit of 64.0 MiB"));
  ::unlink(sparse.c_str());
  // A FIFO whose writer never stops.
  const std::string fifo = les::test::temp_dir() + "/endless.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    signal(SIGPIPE, SIG_IGN);
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    static const char zeros[1 << 16] = {};
    while (!stop.load() && ::write(fd, zeros, sizeof zeros) > 0) {
    }
    ::close(fd);
  });
  r = run_les("tokenize " + m + " -f " + sh_quote(fifo));
  stop.store(true);
  writer.join();
  CHECK(r.exit_code == 1);
  CHECK(has(r.err, "holds more than the limit of 64.0 MiB"));
}
