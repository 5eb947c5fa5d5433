// See signals.h.
#include "serve/signals.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>

namespace les::tool {

SignalWatcher::SignalWatcher() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

void SignalWatcher::start(std::function<void()> on_stop) {
  thread_ = std::thread([this, on_stop = std::move(on_stop)] {
    const timespec tick{0, 100 * 1000 * 1000};
    while (!finished_.load()) {
      const int sig = sigtimedwait(&set_, nullptr, &tick);
      if (sig <= 0) continue;
      if (requested_.exchange(true)) {
        std::fprintf(stderr, "les serve: %s again: exiting now\n", strsignal(sig));
        _exit(128 + sig);
      }
      std::fprintf(stderr, "les serve: %s: stopping (interrupt again to exit at once)\n", strsignal(sig));
      on_stop();
    }
  });
}

void SignalWatcher::finish() {
  finished_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace les::tool
