#include "support/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace les::test {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  REQUIRE(!argv.empty());
  int out_pipe[2], err_pipe[2];
  REQUIRE(pipe2(out_pipe, O_CLOEXEC) == 0);
  REQUIRE(pipe2(err_pipe, O_CLOEXEC) == 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {  // child: only async-signal-safe calls until exec
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
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
      (is_out ? out_ : err_).append(buf, static_cast<size_t>(got));
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
