#include "support/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

namespace les::test {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// Writes to `fd` until the pipe is full; returns the bytes written.
size_t fill_pipe(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  REQUIRE(fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0);
  size_t n = 0;
  const std::string filler(4096, '#');
  for (size_t chunk : {filler.size(), size_t{1}}) {  // pages, then the last bytes
    for (;;) {
      const ssize_t w = write(fd, filler.data(), chunk);
      if (w > 0) {
        n += static_cast<size_t>(w);
        continue;
      }
      REQUIRE((w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)));
      break;
    }
  }
  REQUIRE(fcntl(fd, F_SETFL, flags) == 0);  // the child's end blocks again
  return n;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options) {
  REQUIRE(!argv.empty());
  int out_pipe[2], err_pipe[2], in_pipe[2] = {-1, -1};
  REQUIRE(pipe2(out_pipe, O_CLOEXEC) == 0);
  REQUIRE(pipe2(err_pipe, O_CLOEXEC) == 0);
  if (options.stdin_pipe) REQUIRE(pipe2(in_pipe, O_CLOEXEC) == 0);
  if (options.stdout_full) out_skip_ = fill_pipe(out_pipe[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {  // child: only async-signal-safe calls until exec
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    if (in_pipe[0] >= 0) dup2(in_pipe[0], STDIN_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (in_pipe[0] >= 0) close(in_pipe[0]);
  in_fd_ = in_pipe[1];
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
  if (in_fd_ >= 0) close(in_fd_);
}

bool ChildProcess::pump(int timeout_ms) {
  pollfd fds[2];
  int n = 0;
  if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
  if (n == 0) return false;
  if (poll(fds, static_cast<nfds_t>(n), timeout_ms) <= 0) return true;
  for (int i = 0; i < n; ++i) {
    if (fds[i].revents == 0) continue;
    char buf[4096];
    const ssize_t got = read(fds[i].fd, buf, sizeof buf);
    const bool is_out = fds[i].fd == out_fd_;
    if (got > 0) {
      size_t skip = 0;
      if (is_out) {
        skip = std::min(out_skip_, static_cast<size_t>(got));
        out_skip_ -= skip;
      }
      (is_out ? out_ : err_).append(buf + skip, static_cast<size_t>(got) - skip);
    } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
      close(fds[i].fd);
      (is_out ? out_fd_ : err_fd_) = -1;
    }
  }
  return out_fd_ >= 0 || err_fd_ >= 0;
}

bool ChildProcess::wait_for_stdout(size_t n, double timeout_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (out_.size() < n && seconds_since(t0) < timeout_s)
    if (!pump(50)) break;
  return out_.size() >= n;
}

bool ChildProcess::wait_for_stderr(const std::string& text, double timeout_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (err_.find(text) == std::string::npos && seconds_since(t0) < timeout_s)
    if (!pump(50)) break;
  return err_.find(text) != std::string::npos;
}

void ChildProcess::signal(int sig) { REQUIRE(kill(pid_, sig) == 0); }

void ChildProcess::write_stdin(const std::string& text) {
  REQUIRE(in_fd_ >= 0);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = write(in_fd_, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    REQUIRE(w > 0);
    done += static_cast<size_t>(w);
  }
}

void ChildProcess::close_stdin() {
  if (in_fd_ >= 0) close(in_fd_);
  in_fd_ = -1;
}

bool ChildProcess::wait_blocked_writing_stdout(double timeout_s) const {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string path = "/proc/" + std::to_string(pid_) + "/syscall";
  do {
    // "NR 0x1 ...": the syscall number (SYS_write) and its first argument, the fd.
    std::ifstream f(path);
    std::string nr, fd;
    if (f >> nr >> fd && fd == "0x1" && (nr == std::to_string(SYS_write))) return true;
    usleep(10000);
  } while (seconds_since(t0) < timeout_s);
  return false;
}

bool ChildProcess::wait(double timeout_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) < timeout_s && pump(50)) {
  }
  while (!reaped_) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) term_signal_ = WTERMSIG(status);
      break;
    }
    if (seconds_since(t0) >= timeout_s) return false;  // the destructor kills it
    usleep(10000);
  }
  return true;
}

}  // namespace les::test
