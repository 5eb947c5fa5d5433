// Ctrl-C (SIGINT) and SIGTERM for long-running subcommands, one mechanism for
// all of them. The first signal records itself, sets flag() (a work loop
// polls it: quantize, imatrix), cancels `ctx` through les_context_cancel()
// when one is given (async-signal-safe, les_context.h: run, chat,
// perplexity) and prints a note, so the subcommand stops at its next step,
// still prints what it has (generated text, stop reason "cancelled",
// statistics) and exits with 128 + the signal number (130 for Ctrl-C, as
// shells report an interrupted command). A second signal unlinks
// `remove_path` (when set: a temporary output) and exits at once
// (_exit(128 + signal), no summary), for work that does not stop soon
// enough (a long prefill, a large tensor).
//
// Thread-safety: one InterruptScope at a time per process (signal dispositions
// are process-wide); construct and destroy it on the main thread. flag() and
// signal_number() may be read from any thread.
#pragma once

#include <les/les.h>

#include <atomic>
#include <string>

namespace les::tool {

class InterruptScope {
 public:
  // Installs the SIGINT and SIGTERM handlers. `ctx` (borrowed, may be null)
  // is what the first signal cancels. The note printed on the first signal is
  // "les <tool>: interrupted<note>" (e.g. ": stopping after the current
  // token (interrupt again to exit at once)"; truncated to 160 bytes).
  // `remove_path` ("" = none; paths of 4096 bytes or more are not armed) is
  // unlinked by a second signal before the process exits.
  InterruptScope(les_context* ctx, const char* tool, const char* note, const std::string& remove_path = "");
  // Restores the previous handlers.
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  // Set by the first signal received in this scope.
  const std::atomic<bool>& flag() const noexcept;
  // The first signal received in this scope, 0 if none.
  int signal_number() const noexcept;
  // The exit code for a run that was interrupted: 128 + signal_number().
  int exit_code() const noexcept { return 128 + signal_number(); }
};

// The notes of the two kinds of subcommand.
inline constexpr const char* kStopAfterToken = ": stopping after the current token (interrupt again to exit at once)";
inline constexpr const char* kStopAtNextStep = "; stopping at the next step (again to exit at once)";

}  // namespace les::tool
