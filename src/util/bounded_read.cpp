// Bounded whole-file reads; see bounded_read.h.
#include "util/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace les {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO (pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// Closes a descriptor it opened (never standard input).
struct FdGuard {
  int fd = -1;
  bool own = true;
  ~FdGuard() {
    if (fd >= 0 && own) ::close(fd);
  }
};

}  // namespace

std::string human_bytes(uint64_t n) {
  char b[48];
  const double d = static_cast<double>(n);
  if (n >= (1ull << 30)) std::snprintf(b, sizeof b, "%.1f GiB", d / (1ull << 30));
  else if (n >= (1ull << 20)) std::snprintf(b, sizeof b, "%.1f MiB", d / (1ull << 20));
  else if (n >= (1ull << 10)) std::snprintf(b, sizeof b, "%.1f KiB", d / (1ull << 10));
  else std::snprintf(b, sizeof b, "%llu bytes", static_cast<unsigned long long>(n));
  return b;
}

Result<std::string> read_bounded(const std::string& path, const BoundedRead& r, bool allow_stdin) {
  const bool std_in = allow_stdin && path == "-";
  const std::string name = r.what + (std_in ? std::string(" (standard input)") : " '" + path + "'");
  FdGuard g;
  if (std_in) {
    g.fd = STDIN_FILENO;
    g.own = false;
  } else {
    // Opening a FIFO blocks until a writer opens it; a caller that only takes
    // regular files must not wait for that before refusing it.
    g.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (r.regular_only ? O_NONBLOCK : 0));
    if (g.fd < 0) return io_error(name + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(g.fd, &st) != 0) return io_error(name + ": cannot stat: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return invalid_argument_error(name + ": is a directory");
  if (r.regular_only && !S_ISREG(st.st_mode))
    return invalid_argument_error(name + ": is " + kind_of(st.st_mode) +
                                  ", not a regular file (its end cannot be known before reading it)");
  const std::string bound = human_bytes(r.max_bytes) + (r.max_reason.empty() ? "" : " (" + r.max_reason + ")");
  bool head_checked = !r.check_head;
  if (!head_checked && S_ISREG(st.st_mode)) {  // the magic first: a file of another kind is named as such
    std::string head(r.head_bytes, '\0');
    ssize_t n = 0;
    do n = ::pread(g.fd, head.data(), head.size(), 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) return io_error(name + ": cannot read: " + std::strerror(errno));
    LES_RETURN_IF_ERROR(
        r.check_head(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(head.data()), static_cast<size_t>(n)))
            .with_context(name));
    head_checked = true;
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > r.max_bytes)
    return invalid_argument_error(name + ": is " + human_bytes(static_cast<uint64_t>(st.st_size)) +
                                  ", more than the limit of " + bound);
  if (r.regular_only) {
    const int flags = ::fcntl(g.fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(g.fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(g.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(name + ": cannot read: " + std::strerror(errno));
    }
    if (n == 0) break;
    if (out.size() + static_cast<uint64_t>(n) > r.max_bytes)
      return invalid_argument_error(name + ": holds more than the limit of " + bound +
                                    (S_ISREG(st.st_mode) ? " (it grew while being read)" : ""));
    out.append(buf, static_cast<size_t>(n));
    if (!head_checked && out.size() >= r.head_bytes) {
      head_checked = true;
      LES_RETURN_IF_ERROR(r.check_head(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(out.data()),
                                                                 r.head_bytes))
                              .with_context(name));
    }
  }
  if (!head_checked)
    LES_RETURN_IF_ERROR(
        r.check_head(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(out.data()), out.size()))
            .with_context(name));
  return out;
}

}  // namespace les
