// A child process for tests that must act on a run while it is going (send it
// a signal, change its model file): started with fork + exec, stdout and
// stderr on pipes this process drains, waited for with a timeout; optionally
// stdin on a pipe this process writes, and stdout starting full, so the
// child's first write to it blocks until this process reads (a test can then
// act while the child is known to be inside that write).
//
// Thread-safety: one thread per ChildProcess.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace les::test {

struct ChildOptions {
  bool stdin_pipe = false;   // stdin is a pipe (write_stdin, close_stdin); else inherited
  bool stdout_full = false;  // the stdout pipe starts full (the filler never shows in out())
};

class ChildProcess {
 public:
  // Starts `argv[0]` with arguments argv[1..] (no shell). REQUIREs success.
  explicit ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options = {});
  // Kills (SIGKILL) and reaps the child if it is still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }

  // Drains the pipes until stdout holds at least `n` bytes, the child closes
  // both pipes, or `timeout_s` passes; true if the n bytes arrived.
  bool wait_for_stdout(size_t n, double timeout_s);
  // Drains the pipes until stderr contains `text` (same rules).
  bool wait_for_stderr(const std::string& text, double timeout_s);

  // Sends signal `sig`. REQUIREs success.
  void signal(int sig);

  // With stdin_pipe: writes `text` to the child's stdin (REQUIREs it all
  // written), and closes it (the child reads end of input).
  void write_stdin(const std::string& text);
  void close_stdin();

  // Whether the child's main thread is blocked writing to its stdout (Linux:
  // /proc/PID/syscall is write(1, ...)). Waits up to `timeout_s` for it.
  bool wait_blocked_writing_stdout(double timeout_s) const;

  // Drains the pipes to their end and reaps the child; false if it did not
  // exit within `timeout_s` (it is then killed).
  bool wait(double timeout_s);

  // After wait(): the exit code, or -1 if the child was killed by a signal
  // (then term_signal() says which).
  int exit_code() const noexcept { return exit_code_; }
  int term_signal() const noexcept { return term_signal_; }

  const std::string& out() const noexcept { return out_; }
  const std::string& err() const noexcept { return err_; }

 private:
  // Reads what is available (waiting at most timeout_ms); false once both pipes are closed.
  bool pump(int timeout_ms);

  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1, in_fd_ = -1;
  size_t out_skip_ = 0;  // filler bytes (stdout_full) still to drop from stdout
  bool reaped_ = false;
  int exit_code_ = -1, term_signal_ = 0;
  std::string out_, err_;
};

}  // namespace les::test
