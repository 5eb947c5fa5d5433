// See connection.h.
#include "serve/connection.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace les::tool {
namespace {

// An address as httplib prints it (getnameinfo, numeric host) and its port;
// false for a descriptor that is not an IP socket with that address.
bool address_of(int fd, bool peer, std::string* host, int* port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? getpeername(fd, sa, &len) : getsockname(fd, sa, &len)) != 0) return false;
  if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) return false;
  char h[NI_MAXHOST], p[NI_MAXSERV];
  if (getnameinfo(sa, len, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV) != 0) return false;
  *host = h;
  *port = std::atoi(p);
  return true;
}

}  // namespace

ConnectionWatch::ConnectionWatch(const httplib::Request& req) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  const int own = dirfd(dir);
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == own) continue;
    std::string host;
    int port = -1;
    if (!address_of(static_cast<int>(fd), false, &host, &port) || port != req.local_port || host != req.local_addr)
      continue;
    if (!address_of(static_cast<int>(fd), true, &host, &port) || port != req.remote_port || host != req.remote_addr)
      continue;
    fd_ = static_cast<int>(fd);
    break;
  }
  closedir(dir);
}

bool ConnectionWatch::alive() const {
  if (fd_ < 0) return true;
  pollfd p{fd_, POLLIN, 0};
  const int n = poll(&p, 1, 0);
  if (n <= 0) return true;  // nothing to read: still connected (or poll failed: nothing known)
  char byte;
  const ssize_t r = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (r > 0) return true;  // a next request already sent
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  return false;  // end of file (closed) or an error (reset)
}

}  // namespace les::tool
