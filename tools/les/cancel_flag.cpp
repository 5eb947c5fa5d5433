// Signal-driven cancellation for file-writing subcommands; see cancel_flag.h.
#include "les/cancel_flag.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace les::tool {
namespace {

std::atomic<bool> g_flag{false};
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
char g_message[160];
size_t g_message_len = 0;
char g_path[4096];  // unlinked by a second signal; empty: nothing
struct sigaction g_old_int, g_old_term;

void on_signal(int sig) {
  if (g_count.fetch_add(1) > 0) {
    if (g_path[0] != 0) unlink(g_path);
    _exit(128 + sig);
  }
  g_signal.store(sig);
  g_flag.store(true);
  ssize_t ignored = write(STDERR_FILENO, g_message, g_message_len);
  (void)ignored;
}

}  // namespace

CancelOnSignal::CancelOnSignal(const char* tool, const std::string& remove_path) {
  std::snprintf(g_message, sizeof g_message,
                "\nles %s: interrupted; stopping at the next step (again to exit at once)\n", tool);
  g_message_len = std::strlen(g_message);
  std::snprintf(g_path, sizeof g_path, "%s", remove_path.size() < sizeof g_path ? remove_path.c_str() : "");
  g_flag.store(false);
  g_signal.store(0);
  g_count.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

CancelOnSignal::~CancelOnSignal() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_path[0] = 0;
}

const std::atomic<bool>& CancelOnSignal::flag() const noexcept { return g_flag; }

int CancelOnSignal::signal_number() const noexcept { return g_signal.load(); }

}  // namespace les::tool
