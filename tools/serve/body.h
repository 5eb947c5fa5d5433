// `les serve`: a completion request's body, read through cpp-httplib's
// ContentReader (the completion routes are registered with one) so that
//  - the body is the JSON whatever the Content-Type says: `curl -d` sends
//    application/x-www-form-urlencoded, which httplib's own reading would
//    parse as form fields and refuse with 413 beyond 8 KiB
//    (CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH, compiled into
//    Debian's libcpp-httplib, so a definition here would not change it);
//  - at most `limit` bytes are kept however they come: a Content-Length over
//    it is refused by httplib (set_payload_max_length, the body skipped),
//    and a chunked or compressed body is cut off where it passes the limit
//    (httplib 0.11 checks only Content-Length).
//
// Thread-safety: functions of their arguments.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace les::tool {

// Why a body could not be taken: the HTTP status (413 over the limit, 415 a
// multipart form or an unknown Content-Encoding, 400 a body that could not
// be read), the message for the client, and whether the connection must be
// closed after the reply (the rest of the body is still unread).
struct BodyError {
  int status = 400;
  std::string message;
  bool close_connection = false;
};

// Reads the body into *body (at most `limit` bytes). Returns false with
// *error set. `res` is the reply httplib reports its reading status on.
bool read_request_body(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader,
                       size_t limit, std::string* body, BodyError* error);

// The largest request body the server takes for a context of `n_ctx`
// tokens: 64 KiB for the JSON around the text, plus 64 bytes per token (a
// token's text is a few bytes; 64 leaves room for JSON escapes such as
// \uXXXX, 6 bytes per character). A prompt that could fit the context fits
// the limit; a body far beyond it (a 7 MB prompt for a 4096-token context)
// is refused before it is parsed and tokenized, which takes tens of bytes of
// memory per byte of text.
size_t request_body_limit(int32_t n_ctx);

// "request bodies are limited to N bytes (...)": how the 413 names the limit.
std::string body_limit_text(size_t limit);

}  // namespace les::tool
