// Ctrl-C (SIGINT) and SIGTERM for a long-running file-writing subcommand
// (quantize, imatrix): the first signal sets a flag the work loop polls, so
// it stops at the next step and cleans up (removes its temporary file, or
// writes what it has); a second signal removes `remove_path` (if set) and
// exits at once with 128 + signal.
//
// Thread-safety: one CancelOnSignal at a time per process (signal
// dispositions are process-wide); construct and destroy it on the main
// thread. flag() may be read from any thread.
#pragma once

#include <atomic>
#include <string>

namespace les::tool {

class CancelOnSignal {
 public:
  // `tool` names the subcommand in the message printed on the first signal.
  // `remove_path`: a file the second signal unlinks before exiting ("" none).
  CancelOnSignal(const char* tool, const std::string& remove_path);
  ~CancelOnSignal();
  CancelOnSignal(const CancelOnSignal&) = delete;
  CancelOnSignal& operator=(const CancelOnSignal&) = delete;

  // Set by the first signal.
  const std::atomic<bool>& flag() const noexcept;
  // The first signal's number, 0 if none; exit code 128 + it.
  int signal_number() const noexcept;
  int exit_code() const noexcept { return 128 + signal_number(); }
};

}  // namespace les::tool
