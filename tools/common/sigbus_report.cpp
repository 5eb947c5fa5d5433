// The SIGBUS report; see sigbus_report.h.
#include "common/sigbus_report.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace les::tool {
namespace {

char g_tool[64];

// Bytes written to stderr (best effort: nothing can be done about a failure).
void put(const char* s, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}
void put(const char* s) { put(s, std::strlen(s)); }

// "\nles <tool>: " ("\nles: " without a tool).
void put_prefix() {
  put("\nles");
  if (g_tool[0] != '\0') {
    put(" ");
    put(g_tool);
  }
  put(": ");
}

void put_hex(uintptr_t v) {
  char b[2 + 2 * sizeof v];
  size_t i = sizeof b;
  do {
    b[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v != 0 && i > 2);
  b[--i] = 'x';
  b[--i] = '0';
  put(b + i, sizeof b - i);
}

// A hexadecimal number at line[*i], advancing *i past it.
uintptr_t parse_hex(const char* line, size_t n, size_t* i) {
  uintptr_t v = 0;
  for (; *i < n; ++*i) {
    const char c = line[*i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) break;
    v = v * 16 + static_cast<uintptr_t>(d);
  }
  return v;
}

// One line of /proc/self/maps ("start-end perms offset dev inode   path"):
// true with *path (into `line`) when the mapping holds `addr` and names a file.
bool line_holds(const char* line, size_t n, uintptr_t addr, const char** path, size_t* path_len) {
  size_t i = 0;
  const uintptr_t start = parse_hex(line, n, &i);
  if (i >= n || line[i] != '-') return false;
  ++i;
  const uintptr_t end = parse_hex(line, n, &i);
  if (addr < start || addr >= end) return false;
  for (int field = 0; field < 4; ++field) {  // perms, offset, dev, inode
    while (i < n && line[i] == ' ') ++i;
    while (i < n && line[i] != ' ') ++i;
  }
  while (i < n && line[i] == ' ') ++i;
  if (i >= n || line[i] != '/') return false;  // anonymous, [heap], [stack]...
  *path = line + i;
  *path_len = n - i;
  return true;
}

// Finds the file mapped at `addr` and reports it; false when none is found.
bool report_mapping(uintptr_t addr) {
  static char buf[8192];
  static char line[8192];
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t line_len = 0;
  bool found = false;
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got <= 0) break;
    for (ssize_t k = 0; k < got && !found; ++k) {
      if (buf[k] != '\n') {
        if (line_len < sizeof line) line[line_len++] = buf[k];
        continue;
      }
      const char* path = nullptr;
      size_t path_len = 0;
      if (line_holds(line, line_len, addr, &path, &path_len)) {
        put_prefix();
        put("SIGBUS: the memory-mapped file '");
        put(path, path_len);
        put("' was truncated or replaced while in use (address ");
        put_hex(addr);
        put("); its lost pages cannot be read. Keep model files unchanged while they are in use, or run with "
            "--weights read (the model held in memory: a changed file cannot stop the run)\n");
        found = true;
      }
      line_len = 0;
    }
    if (found) break;
  }
  ::close(fd);
  return found;
}

void on_sigbus(int sig, siginfo_t* info, void*) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info != nullptr ? info->si_addr : nullptr);
  if (!report_mapping(addr)) {
    put_prefix();
    put("SIGBUS at address ");
    put_hex(addr);
    put(" (no mapped file holds it)\n");
  }
  _exit(128 + sig);
}

}  // namespace

void install_sigbus_report(const char* tool) {
  std::strncpy(g_tool, tool, sizeof g_tool - 1);
  g_tool[sizeof g_tool - 1] = '\0';
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGBUS, &sa, nullptr);
}

}  // namespace les::tool
