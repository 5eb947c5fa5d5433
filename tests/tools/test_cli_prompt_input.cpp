// Prompt files as a hostile user gives them (issue 36, defects 6 and 7):
// `les run -f /dev/zero` was OOM-killed, a FIFO that never ends was read
// until memory ran out, and `les run -f` cut a prompt at its first NUL byte
// (`les tokenize -f` saw 9 tokens, `les run -f` evaluated 2). A prompt file is
// now read up to 64 MiB (text_input.h) with a message beyond, and its bytes
// reach the model with their length, NUL bytes included; chat messages, which
// les.h takes as C strings, are refused when they hold a NUL byte.
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

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = les::test::temp_dir() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
  return path;
}

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

TEST_CASE("les run -f: a prompt with NUL bytes reaches the model whole", "[cli][nul]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string m = sh_quote(model);
  const std::string text = std::string("It is a truth") + '\0' + "universally acknowledged" + '\0' + "that";
  const std::string file = write_temp("nul.txt", text);
  const auto tok = run_les("tokenize " + m + " -f " + sh_quote(file) + " --ids");
  REQUIRE(tok.exit_code == 0);
  int n_ids = 0;
  for (size_t i = 0; i < tok.out.size();) {
    while (i < tok.out.size() && (tok.out[i] == ' ' || tok.out[i] == '\n')) ++i;
    if (i == tok.out.size()) break;
    ++n_ids;
    while (i < tok.out.size() && tok.out[i] != ' ' && tok.out[i] != '\n') ++i;
  }
  INFO("les tokenize -f: " << tok.out);
  REQUIRE(n_ids > 8);
  const auto run = run_les("run -m " + m + " -n 1 --temp 0 -f " + sh_quote(file));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(les::test::number_after(run.err, "prompt tokens ") == n_ids);
  // The same text with --chat is one user message: refused, naming the NUL byte.
  const auto chat = run_les("run -m " + m + " -n 1 --chat -f " + sh_quote(file));
  CHECK(chat.exit_code == 2);
  CHECK(has(chat.err, "NUL byte at byte 13"));
}
