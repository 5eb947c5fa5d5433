// `les serve`: the signals that stop the server. SIGINT (Ctrl-C), SIGTERM
// and SIGHUP (the terminal went away) are blocked in every thread and taken
// by one watcher thread with sigtimedwait: the first stops the server
// through `on_stop` (outside a signal handler, so it may lock and wait) with
// a message naming the signal; a second exits at once (128 + signal).
//
// Thread-safety: construct it on the main thread before any other thread
// starts (threads inherit the blocked signals); start() and finish() from
// that thread; requested() from any.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace les::tool {

class SignalWatcher {
 public:
  SignalWatcher();  // blocks the signals in this thread (and so in threads it starts later)
  ~SignalWatcher() { finish(); }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  // Starts watching; `on_stop` runs on the watcher thread at the first signal.
  void start(std::function<void()> on_stop);
  // Ends the watcher (what on_stop uses may be destroyed after this).
  void finish();
  // Whether a signal came.
  bool requested() const { return requested_.load(); }

 private:
  sigset_t set_;
  std::thread thread_;
  std::atomic<bool> finished_{false}, requested_{false};
};

}  // namespace les::tool
