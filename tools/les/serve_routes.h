// `les serve`: the HTTP routes of the OpenAI-compatible API on a
// cpp-httplib server.
//   GET  /health               200 {"status": "ok"} once the model is loaded;
//                              503 (error object) before
//   GET  /v1/models            the one model: {object: "list", data: [{id, ...}]}
//   POST /v1/chat/completions  messages -> choices[0].message.content
//   POST /v1/completions       prompt -> choices[0].text
// A completion request with "stream": true is answered with server-sent
// events, `data: {chunk}` per piece of text (choices[0].delta.content, or
// choices[0].text), a last chunk with finish_reason (and, with
// stream_options.include_usage, one with usage), then `data: [DONE]`.
// Otherwise the reply is one JSON object with usage. Both are sent with
// chunked transfer encoding once the request's turn comes, so a client that
// disconnects while queued or while its text is generated is noticed
// (httplib's DataSink::is_writable: the socket reads end-of-file) and its
// generation stops at the next token.
// Errors are OpenAI error objects: 400 for a request that cannot be served
// as sent (invalid JSON, a missing or mistyped field, a value out of range,
// an unknown role, a prompt longer than the context), 401 without the API
// key (every /v1/ route, when --api-key is set; /health stays open), 404 for
// an unknown route, 413 for a body over the limit, 503 while the model loads.
// An engine failure or a shutdown after the reply started ends it with an
// error object (in the stream, as one more event) instead of a result.
//
// Thread-safety: the handlers run on httplib's worker threads; ServeState is
// shared by them (the engine pointer is atomic; the rest is read-only).
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "les/serve_engine.h"

namespace les::tool {

struct ServeState {
  std::string api_key;        // "" = no key required
  std::string model_id;       // what /v1/models lists and replies carry
  int64_t created = 0;        // Unix seconds, for /v1/models
  size_t max_body_bytes = 0;  // larger request bodies get 413
  std::atomic<Engine*> engine{nullptr};  // set once the model is loaded
};

// Registers the routes, the API key check and the JSON error replies on
// `server`. `state` must outlive the server's listening.
void install_routes(httplib::Server& server, ServeState& state);

}  // namespace les::tool
