// Signal handling for long-running subcommands; see interrupt.h.
#include "les/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace les::tool {
namespace {

// Process-wide by nature: signal handlers reach the scope's state only
// through these. The atomics are lock-free (async-signal-safe to use); the
// buffers are written before the handlers are installed.
std::atomic<les_context*> g_ctx{nullptr};
std::atomic<bool> g_flag{false};
std::atomic<int> g_first_signal{0};
std::atomic<int> g_count{0};
static_assert(std::atomic<les_context*>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
              std::atomic<bool>::is_always_lock_free);
char g_message[160];
size_t g_message_len = 0;
char g_path[4096];  // unlinked by a second signal; empty: nothing
struct sigaction g_old_int, g_old_term;

void on_signal(int sig) {
  if (g_count.fetch_add(1) > 0) {  // the second signal: exit now
    if (g_path[0] != 0) unlink(g_path);
    _exit(128 + sig);
  }
  g_first_signal.store(sig);
  g_flag.store(true);
  if (les_context* ctx = g_ctx.load()) les_context_cancel(ctx);
  ssize_t ignored = write(STDERR_FILENO, g_message, g_message_len);
  (void)ignored;
}

}  // namespace

InterruptScope::InterruptScope(les_context* ctx, const char* tool, const char* note, const std::string& remove_path) {
  std::snprintf(g_message, sizeof g_message, "\nles %s: interrupted%s\n", tool, note);
  g_message_len = std::strlen(g_message);
  std::snprintf(g_path, sizeof g_path, "%s", remove_path.size() < sizeof g_path ? remove_path.c_str() : "");
  g_ctx.store(ctx);
  g_flag.store(false);
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
  g_path[0] = 0;
}

const std::atomic<bool>& InterruptScope::flag() const noexcept { return g_flag; }

int InterruptScope::signal_number() const noexcept { return g_first_signal.load(); }

}  // namespace les::tool
