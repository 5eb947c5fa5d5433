// Ctrl-C (SIGINT) and SIGTERM while a subcommand generates: the first signal
// cancels the running generation through les_context_cancel() (async-signal-
// safe, les_context.h), so the subcommand still prints what was generated, the
// stop reason ("cancelled") and its statistics, then exits with 128 + the
// signal number (130 for Ctrl-C, as shells report an interrupted command). A
// second signal exits at once (_exit(128 + signal), no summary), for a
// generation that does not stop soon enough (a long prefill).
//
// Thread-safety: one InterruptScope at a time per process (signal dispositions
// are process-wide); construct and destroy it on the main thread.
#pragma once

#include <les/les.h>

namespace les::tool {

class InterruptScope {
 public:
  // Installs the SIGINT and SIGTERM handlers; `ctx` (borrowed) is what the
  // first signal cancels. `tool` names the subcommand in the message printed
  // when the first signal arrives ("les run: interrupted ...").
  InterruptScope(les_context* ctx, const char* tool);
  // Restores the previous handlers.
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  // The first signal received in this scope, 0 if none.
  int signal_number() const noexcept;
  // The exit code for a run that was interrupted: 128 + signal_number().
  int exit_code() const noexcept { return 128 + signal_number(); }
};

}  // namespace les::tool
