// Signal handling for long-running subcommands; see interrupt.h.
#include "common/interrupt.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

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
std::atomic<bool> g_at_once{false};
char g_message[4096 + 256];
size_t g_message_len = 0;
char g_path[4096];  // unlinked before exiting on a signal; empty: nothing
// When g_path is "OUT.tmp": OUT, and the note for a signal that lands after the writer renamed
// OUT.tmp to OUT (the output is complete, so "not written" would be false).
char g_final[4096];
char g_written_message[4096 + 256];
size_t g_written_message_len = 0;
struct timespec g_start {};  // when the scope began: an OUT older than this is not ours

// True when g_path is gone because it was renamed to g_final during this scope (async-signal-safe:
// unlink, stat).
bool renamed_into_place(bool unlink_failed_enoent) {
  if (!unlink_failed_enoent || g_final[0] == 0) return false;
  struct stat st;
  if (stat(g_final, &st) != 0) return false;
  return st.st_mtim.tv_sec > g_start.tv_sec ||
         (st.st_mtim.tv_sec == g_start.tv_sec && st.st_mtim.tv_nsec >= g_start.tv_nsec);
}
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3];

void on_signal(int sig) {
  if (g_at_once.load() || g_count.fetch_add(1) > 0) {  // exit now
    const bool enoent = g_path[0] != 0 && unlink(g_path) != 0 && errno == ENOENT;
    if (g_at_once.load()) {  // the note says the output is gone: after the unlink
      const bool written = renamed_into_place(enoent);
      ssize_t ignored = written ? write(STDERR_FILENO, g_written_message, g_written_message_len)
                                : write(STDERR_FILENO, g_message, g_message_len);
      (void)ignored;
    }
    _exit(128 + sig);
  }
  g_first_signal.store(sig);
  g_flag.store(true);
  if (les_context* ctx = g_ctx.load()) les_context_cancel(ctx);
  ssize_t ignored = write(STDERR_FILENO, g_message, g_message_len);
  (void)ignored;
}

}  // namespace

InterruptScope::InterruptScope(les_context* ctx, const char* tool, const char* note, const std::string& remove_path,
                               OnSignal on) {
  std::snprintf(g_message, sizeof g_message, "\nles %s: interrupted%s\n", tool, note);
  g_message_len = std::strlen(g_message);
  std::snprintf(g_path, sizeof g_path, "%s", remove_path.size() < sizeof g_path ? remove_path.c_str() : "");
  const std::string suffix = ".tmp";
  const bool tmp_of_out = remove_path.size() > suffix.size() && remove_path.size() < sizeof g_final &&
                          remove_path.compare(remove_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string final_path = tmp_of_out ? remove_path.substr(0, remove_path.size() - suffix.size()) : "";
  std::snprintf(g_final, sizeof g_final, "%s", final_path.c_str());
  std::snprintf(g_written_message, sizeof g_written_message, "\nles %s: interrupted after %s was written\n", tool,
                final_path.c_str());
  g_written_message_len = std::strlen(g_written_message);
  clock_gettime(CLOCK_REALTIME, &g_start);
  g_ctx.store(ctx);
  g_flag.store(false);
  g_first_signal.store(0);
  g_count.store(0);
  g_at_once.store(on == OnSignal::exit_at_once);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes of the main thread resume after the handler
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_old[i]);
}

InterruptScope::~InterruptScope() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
  g_ctx.store(nullptr);
  g_path[0] = 0;
  g_final[0] = 0;
}

const std::atomic<bool>& InterruptScope::flag() const noexcept { return g_flag; }

int InterruptScope::signal_number() const noexcept { return g_first_signal.load(); }

std::string not_written_note(const std::string& out) { return "; " + out + " not written"; }

}  // namespace les::tool
