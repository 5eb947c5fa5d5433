// `les serve`: whether the client of a request is still connected, while
// its handler runs. cpp-httplib 0.11 gives a handler no access to its
// connection (only a chunked content provider sees it, and by then the
// status line is sent), so the socket is found by its address: the open file
// descriptor whose local and peer address and port are the request's
// (Request::local_addr/local_port/remote_addr/remote_port). The handler's
// own connection stays open while it runs, so the descriptor found is that
// connection's for as long as the handler uses it.
//
// Thread-safety: a ConnectionWatch belongs to one handler (one thread).
#pragma once

#include <httplib.h>

namespace les::tool {

class ConnectionWatch {
 public:
  // Finds the request's socket (Linux: the descriptors in /proc/self/fd).
  explicit ConnectionWatch(const httplib::Request& req);

  // False once the client has closed or reset the connection (the socket
  // reads end of file or an error); true while it is open, or when the
  // socket was not found (then nothing is known). A client that has sent
  // a next request on the same connection counts as connected.
  bool alive() const;

  // Whether the socket was found (alive() can tell).
  bool found() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace les::tool
