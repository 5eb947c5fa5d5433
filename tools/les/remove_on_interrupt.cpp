// See remove_on_interrupt.h.
#include "les/remove_on_interrupt.h"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace les::tool {
namespace {

char g_path[4096];  // NUL-terminated; empty = nothing to remove
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3];

extern "C" void remove_and_reraise(int signo) {
  if (g_path[0] != '\0') ::unlink(g_path);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(signo, &dfl, nullptr);
  ::raise(signo);
}

}  // namespace

RemoveOnInterrupt::RemoveOnInterrupt(const std::string& path) {
  if (path.size() >= sizeof g_path) return;
  std::memcpy(g_path, path.c_str(), path.size() + 1);
  struct sigaction sa {};
  sa.sa_handler = remove_and_reraise;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &g_old[i]);
}

RemoveOnInterrupt::~RemoveOnInterrupt() {
  if (g_path[0] == '\0') return;
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &g_old[i], nullptr);
  g_path[0] = '\0';
}

}  // namespace les::tool
