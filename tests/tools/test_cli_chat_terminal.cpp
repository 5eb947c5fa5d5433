// `les chat` at a terminal (a pty from forkpty): a message is never cut at
// the canonical mode's 4,095-byte line limit, the line editor's keys, the
// history, a bracketed multi-line paste, /help, and the terminal's mode given
// back. The message's length is read from les chat's own count of its tokens
// ("this message (N tokens with the template) does not fit n_ctx"), compared
// with the same message read from a file, where no terminal is involved.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

namespace {

constexpr const char* kModel = "synthetic/qwen3moe-F16.gguf";

// A child process on the slave side of a pty; this side writes its keys and
// reads all it shows (stdout and stderr both go to the terminal).
class Terminal {
 public:
  explicit Terminal(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = ::forkpty(&master_, nullptr, nullptr, nullptr);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
  }
  ~Terminal() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(master_);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // Types `keys`, reading what the terminal shows meanwhile (the echo cannot
  // block the child). REQUIREs it all written within `timeout_s`.
  void type(const std::string& keys, double timeout_s = 60) {
    size_t at = 0;
    const auto end = deadline(timeout_s);
    while (at < keys.size()) {
      REQUIRE(std::chrono::steady_clock::now() < end);
      const ssize_t w = ::write(master_, keys.data() + at, keys.size() - at);
      if (w > 0) at += static_cast<size_t>(w);
      pump(10);
    }
  }

  // Reads until the screen text after `from` contains `text`; false on timeout or hangup.
  bool wait_for(const std::string& text, size_t from, double timeout_s = 120) {
    const auto end = deadline(timeout_s);
    while (shown_.find(text, from) == std::string::npos) {
      if (std::chrono::steady_clock::now() >= end || !pump(100)) return shown_.find(text, from) != std::string::npos;
    }
    return true;
  }

  // Where `text` first shows at or after `from` (npos: not yet).
  size_t find(const std::string& text, size_t from) const { return shown_.find(text, from); }

  // Types `keys` (a line and its Enter) and waits until the terminal shows
  // `expect` and then the next prompt; false on timeout.
  bool line(const std::string& keys, const std::string& expect) {
    const size_t at = size();
    type(keys);
    if (!wait_for(expect, at)) return false;
    return wait_for(kPrompt, find(expect, at));
  }

  static constexpr const char* kPrompt = "\n> ";

  // The terminal's local modes now (set by the child on the slave side).
  tcflag_t lflag() const {
    termios t{};
    REQUIRE(::tcgetattr(master_, &t) == 0);
    return t.c_lflag;
  }

  // Reads to the end and reaps the child; its exit code (-1 if it did not exit normally).
  int wait(double timeout_s = 60) {
    const auto end = deadline(timeout_s);
    int status = 0;
    for (;;) {
      pump(50);
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (std::chrono::steady_clock::now() >= end) return -1;
    }
    reaped_ = true;
    term_signal_ = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    while (pump(10)) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  void signal(int sig) const { REQUIRE(::kill(pid_, sig) == 0); }
  // After wait(): the signal that ended the child (0 if it exited).
  int term_signal() const noexcept { return term_signal_; }

  // All the terminal showed, \r dropped (the terminal turns \n into \r\n).
  std::string shown() const {
    std::string s;
    for (char c : shown_)
      if (c != '\r') s.push_back(c);
    return s;
  }
  size_t size() const { return shown_.size(); }

 private:
  static std::chrono::steady_clock::time_point deadline(double s) {
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
  }
  // Reads what the child showed (waiting up to timeout_ms); false on hangup.
  bool pump(int timeout_ms) {
    pollfd p{master_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return true;
    char buf[8192];
    const ssize_t n = ::read(master_, buf, sizeof buf);
    if (n > 0) {
      shown_.append(buf, static_cast<size_t>(n));
      return true;
    }
    return n < 0 && errno == EAGAIN;
  }

  int master_ = -1;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int term_signal_ = 0;
  std::string shown_;
};

// "(N tokens with the template)": N.
long message_tokens(const std::string& text) {
  const size_t at = text.find("this message (");
  REQUIRE(at != std::string::npos);
  return std::stol(text.substr(at + std::strlen("this message (")));
}

}  // namespace

TEST_CASE("les chat at a terminal: a 10,000-byte pasted message arrives whole", "[cli][chat][terminal]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  std::string message;
  for (int i = 0; message.size() < 10000; ++i) message += "word" + std::to_string(i % 97) + " ";
  message.resize(10000);
  // From a file: the reference count (no terminal, no line limit). n_ctx 64 refuses the
  // message before any decoding and says how many tokens it has.
  const std::string path = les::test::temp_dir() + "/chat-long.txt";
  std::ofstream(path, std::ios::binary) << message << "\n";
  const RunResult file = run_les("chat -m " + sh_quote(model) + " --ctx 64 -n 1 < " + sh_quote(path));
  REQUIRE(file.exit_code == 0);
  const long want = message_tokens(file.err);
  // What the canonical mode would have kept, 4,095 bytes, has fewer.
  std::ofstream(path, std::ios::binary) << message.substr(0, 4095) << "\n";
  const RunResult cut = run_les("chat -m " + sh_quote(model) + " --ctx 64 -n 1 < " + sh_quote(path));
  REQUIRE(cut.exit_code == 0);
  CHECK(message_tokens(cut.err) < want);

  Terminal t({les::test::les_binary(), "chat", "-m", model, "--ctx", "64", "-n", "1"});
  REQUIRE(t.wait_for(Terminal::kPrompt, 0));
  CHECK((t.lflag() & ICANON) == 0);  // waiting for a line: non-canonical
  const size_t before = t.shown().size();  // shown() drops \r: index it, not the raw capture
  REQUIRE(t.line(message + "\r", "does not fit n_ctx"));
  const std::string shown = t.shown().substr(before);
  CHECK(shown.find(message) != std::string::npos);  // echoed whole
  CHECK(message_tokens(shown) == want);
  t.type("\x04");  // Ctrl-D on an empty line: end of input
  CHECK(t.wait() == 0);
}

TEST_CASE("les chat at a terminal: editing keys, history, /help, bracketed paste, mode restored",
          "[cli][chat][terminal]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Terminal t({les::test::les_binary(), "chat", "-m", model, "--ctx", "64", "-n", "1"});
  REQUIRE(t.wait_for(Terminal::kPrompt, 0));
  // Backspace over a typo: "/help" is what is sent.
  CHECK(t.line("/stat\x7f\x7f\x7f\x7fhelq\x7fp\r", "/exit, /quit"));
  // Ctrl-U erases the whole line.
  CHECK(t.line("garbage words\x15/hel\x7f\x7f\x7f\x7f\x7f/help\r", "les chat commands:"));
  CHECK(t.line("/nosuch\r", "unknown command '/nosuch'"));
  CHECK(t.shown().find("/help;") != std::string::npos);  // the error lists /help too
  // Up recalls earlier lines (the same line twice in a row is kept once): two back is /help.
  CHECK(t.line("\x1b[A\x1b[A\r", "les chat commands:"));
  // Up then Down comes back to the line being typed; Down at the newest stays.
  CHECK(t.line("/x\x1b[A\x1b[B\x1b[Byz\r", "unknown command '/xyz'"));
  // Ctrl-W erases the last word (and the blanks after it).
  CHECK(t.line("/reset  two\x17\x17\x17/bad\r", "unknown command '/bad'"));
  // A bracketed paste keeps its newline in the one line.
  CHECK(t.line("\x1b[200~/first\rsecond\x1b[201~\r", "unknown command '/first"));
  CHECK(t.shown().find("unknown command '/first\nsecond'") != std::string::npos);
  // Ctrl-D inside a line does nothing; /exit leaves, the terminal back in canonical mode with echo.
  t.type("ab\x04\x7f\x7f/exit\r");
  CHECK(t.wait() == 0);
  CHECK((t.lflag() & ICANON) != 0);
  CHECK((t.lflag() & ECHO) != 0);
}

TEST_CASE("les chat at a terminal: SIGTERM while waiting gives the terminal its mode back", "[cli][chat][terminal]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Terminal t({les::test::les_binary(), "chat", "-m", model, "--ctx", "64", "-n", "1"});
  REQUIRE(t.wait_for(Terminal::kPrompt, 0));
  t.type("half a line");
  REQUIRE(t.wait_for("half a line", 0));
  REQUIRE((t.lflag() & ICANON) == 0);
  t.signal(SIGTERM);  // the handler restores the mode, then the signal ends the process
  CHECK(t.wait() == -1);
  CHECK(t.term_signal() == SIGTERM);
  CHECK((t.lflag() & ICANON) != 0);
  CHECK((t.lflag() & ECHO) != 0);
}
