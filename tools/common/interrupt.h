// Ctrl-C (SIGINT), SIGTERM and SIGHUP (a closed terminal or ssh session) for
// long-running subcommands, one mechanism for all of them.
//
// OnSignal::stop_at_next_step (run, chat, perplexity, imatrix, quantize): the
// first signal records itself, sets flag() (a work loop polls it: quantize,
// imatrix), cancels `ctx` through les_context_cancel() when one is given
// (async-signal-safe, les_context.h) and prints a note, so the subcommand
// stops at its next step, still prints what it has (generated text, stop
// reason "cancelled", statistics) and exits with 128 + the signal number (130
// for Ctrl-C, as shells report an interrupted command). A second signal
// unlinks `remove_path` (when set: a temporary output) and exits at once
// (_exit(128 + signal), no summary), for work that does not stop soon enough
// (a long prefill, a large tensor).
//
// OnSignal::exit_at_once (repack, synth: writers that do not poll): the first
// signal already unlinks `remove_path`, prints the note and exits with
// 128 + signal. When `remove_path` is "OUT.tmp" and the writer has already
// renamed it to OUT during this scope (the signal lands between the rename
// and the end), the note is "les <tool>: interrupted after OUT was written"
// instead: the output is complete.
//
// Thread-safety: one InterruptScope at a time per process (signal dispositions
// are process-wide); construct and destroy it on the main thread. flag() and
// signal_number() may be read from any thread.
#pragma once

#include <les/les.h>

#include <atomic>
#include <string>

namespace les::tool {

enum class OnSignal { stop_at_next_step, exit_at_once };

class InterruptScope {
 public:
  // Installs the SIGINT, SIGTERM and SIGHUP handlers. `ctx` (borrowed, may be
  // null) is what the first signal cancels. The note printed on the first
  // signal is "les <tool>: interrupted<note>" (e.g. ": stopping after the
  // current token (interrupt again to exit at once)"; truncated to 4.3 KB).
  // `remove_path` ("" = none; paths of 4096 bytes or more are not armed) is
  // unlinked before the process exits on a signal.
  InterruptScope(les_context* ctx, const char* tool, const char* note, const std::string& remove_path = "",
                 OnSignal on_signal = OnSignal::stop_at_next_step);
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

// The notes of the kinds of subcommand.
inline constexpr const char* kStopAfterToken =
    ": stopping at the next token or prompt chunk (interrupt again to exit at once)";
inline constexpr const char* kStopAtNextStep = "; stopping at the next step (again to exit at once)";

// For OnSignal::exit_at_once: "; OUT not written" (for a writer of `out`).
std::string not_written_note(const std::string& out);

}  // namespace les::tool
