// See body.h.
#include "serve/body.h"

namespace les::tool {

constexpr size_t kBodyBase = 64 * 1024, kBodyBytesPerToken = 64;

size_t request_body_limit(int32_t n_ctx) {
  return kBodyBase + kBodyBytesPerToken * static_cast<size_t>(n_ctx > 0 ? n_ctx : 0);
}

std::string body_limit_text(size_t limit) {
  return "request bodies are limited to " + std::to_string(limit) + " bytes (64 KiB + " +
         std::to_string(kBodyBytesPerToken) + " bytes per token of the context; les serve -c sets its size)";
}

bool read_request_body(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader,
                       size_t limit, std::string* body, BodyError* error) {
  // Past the limit the rest is read and dropped, up to kDrainMax bytes, so
  // the reply reaches a client that is still sending (closing a socket with
  // unread bytes resets the connection, which can lose the reply).
  constexpr size_t kDrainMax = 64u << 20;
  bool over = false;
  size_t dropped = 0;
  const auto drop = [&](size_t n) {
    dropped += n;
    return dropped <= kDrainMax;
  };
  const auto keep = [&](const char* data, size_t n) {
    if (!over && n <= limit - body->size()) {
      body->append(data, n);
      return true;
    }
    if (!over) {
      over = true;
      std::string().swap(*body);
    }
    return drop(n);
  };
  bool ok = false;
  const bool form = req.is_multipart_form_data();
  if (form) {  // read but not kept: a form is not JSON
    ok = reader([](const httplib::MultipartFormData&) { return true; },
                [&](const char*, size_t n) { return drop(n); });
    over = dropped > limit;
  } else {
    ok = reader(keep);
  }
  if (over || (!ok && res.status == 413)) {  // httplib's 413: a Content-Length over the limit, whose body it skipped
    *error = {413, "the request body is too large: " + body_limit_text(limit), over && !ok};
  } else if (ok && form) {
    *error = {415, "the request body must be JSON (Content-Type: application/json), got a multipart form", false};
  } else if (ok) {
    return true;
  } else if (res.status == 415) {
    *error = {415, "the request body's Content-Encoding " + req.get_header_value("Content-Encoding") +
                       " is not supported (gzip, deflate, br or none)", true};
  } else {
    *error = {400, "the request body could not be read (a malformed chunked or compressed body, or the client "
                   "stopped sending)", true};
  }
  return false;
}

}  // namespace les::tool
