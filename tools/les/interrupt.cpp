// Signal handling for generating subcommands; see interrupt.h.
#include "les/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

namespace les::tool {
namespace {

// Process-wide by nature: signal handlers reach the scope's state only
// through these. All are lock-free atomics (async-signal-safe to use).
std::atomic<les_context*> g_ctx{nullptr};
std::atomic<int> g_first_signal{0};
std::atomic<int> g_count{0};
static_assert(std::atomic<les_context*>::is_always_lock_free && std::atomic<int>::is_always_lock_free);
char g_message[160];
size_t g_message_len = 0;
struct sigaction g_old_int, g_old_term;

void on_signal(int sig) {
  if (g_count.fetch_add(1) > 0) _exit(128 + sig);  // the second signal: exit now
  g_first_signal.store(sig);
  les_context_cancel(g_ctx.load());
  ssize_t ignored = write(STDERR_FILENO, g_message, g_message_len);
  (void)ignored;
}

}  // namespace

InterruptScope::InterruptScope(les_context* ctx, const char* tool) {
  std::snprintf(g_message, sizeof g_message,
                "\nles %s: interrupted: stopping after the current token (interrupt again to exit at once)\n", tool);
  g_message_len = std::strlen(g_message);
  g_ctx.store(ctx);
  g_first_signal.store(0);
  g_count.store(0);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes of the main thread resume after the handler
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_ctx.store(nullptr);
}

int InterruptScope::signal_number() const noexcept { return g_first_signal.load(); }

}  // namespace les::tool
