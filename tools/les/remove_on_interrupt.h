// Removes a job's temporary file when the job is interrupted (SIGINT,
// SIGTERM, SIGHUP), so that Ctrl-C on `les repack` or `les synth` does not
// leave a multi-GB OUT.tmp behind. The handler unlinks the path (an
// async-signal-safe call), restores the default action and re-raises the
// signal, so the process still ends as interrupted (exit status 128 + signo).
//
// Thread-safety: one instance at a time per process (the path is held in
// static storage for the handler); construct and destroy on the main thread.
#pragma once

#include <string>

namespace les::tool {

class RemoveOnInterrupt {
 public:
  // Arms the handlers for `path` (kept up to 4095 bytes; a longer path is not armed).
  explicit RemoveOnInterrupt(const std::string& path);
  // Restores the previous handlers.
  ~RemoveOnInterrupt();
  RemoveOnInterrupt(const RemoveOnInterrupt&) = delete;
  RemoveOnInterrupt& operator=(const RemoveOnInterrupt&) = delete;
};

}  // namespace les::tool
