// `les serve`: the HTTP routes of the OpenAI-compatible API on a
// cpp-httplib server.
//   GET  /health               200 {"status": "ok", "requests": {"running",
//                              "waiting", "max_waiting"}} once the model is
//                              loaded; 503 (error object) before
//   GET  /v1/models            the one model: {object: "list", data: [{id, ...}]}
//   POST /v1/chat/completions  messages -> choices[0].message.content
//   POST /v1/completions       prompt -> choices[0].text
//   POST /tokenize, /detokenize  text <-> token ids (tokenize.h)
//   GET  /metrics              Prometheus text (metrics.h): replies by route and
//                              status, tokens, decode speed, the queue, the
//                              expert cache (needs the API key, as /v1/ does)
// With --cors-origin, CORS preflights are answered and replies carry
// Access-Control-Allow-Origin (cors.h).
// The completion routes are in completion.h (whole and streamed
// replies, the queue, what a shutdown answers).
// Errors are OpenAI error objects: 400 for a request that cannot be served
// as sent (invalid JSON, a missing or mistyped field, a value out of range,
// an unknown role, an unsupported field, a prompt longer than the context),
// 401 without the API key (every /v1/ route, /tokenize, /detokenize and /metrics,
// when --api-key is set: the header "Authorization: Bearer KEY", the scheme
// in any case; /health stays open), 404 for an unknown route, 413 for a body over the limit (its
// message names the limit), 415 for a body that is not JSON, 503 while the
// queue is full (with Retry-After) or the server stops.
//
// Thread-safety: the handlers run on httplib's worker threads; ServeState is
// shared by them (the engine pointer is atomic; the rest is set before the
// server listens and read-only after).
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "serve/engine.h"
#include "serve/json_limits.h"

namespace les::tool {

struct ServeState {
  std::string api_key;        // "" = no key required
  std::string model_id;       // what /v1/models lists and replies carry
  int64_t created = 0;        // Unix seconds, for /v1/models
  size_t max_body_bytes = 0;  // larger request bodies get 413 (body.h)
  ImageLimits image_limits;   // --max-images, --max-image-mb (request.h)
  JsonShapeLimits json_limits;  // nesting and values a body may hold (json_limits.h)
  ParseGate parse_gate{kConcurrentParses};  // bodies parsed at once
  std::vector<std::string> cors_origins;  // --cors-origin (cors.h); empty: no CORS
  ServeMetrics metrics;                   // GET /metrics (metrics.h)
  std::atomic<ServeEngine*> engine{nullptr};  // set once the model is loaded
};

// Registers the routes, the API key check and the JSON error replies on
// `server`, and sets its payload limit to state.max_body_bytes (so call it
// once that is known, before the server listens). `state` must outlive the
// server's listening.
void install_routes(httplib::Server& server, ServeState& state);

// Whether `req` may use its route: always without --api-key, and outside
// /v1/, /tokenize, /detokenize and /metrics; else when its Authorization header carries the key.
bool authorized(const ServeState& state, const httplib::Request& req);

// The 401 reply (WWW-Authenticate: Bearer, an authentication_error object).
void refuse_unauthorized(const httplib::Request& req, httplib::Response& res);

// Whether an Authorization header value carries `key`: the scheme "Bearer"
// in any case (RFC 7235), one or more spaces, then the key, compared in a
// time that depends on the key's length only: not on where the first
// difference is, nor on the length of what was sent.
bool bearer_matches(const std::string& header, const std::string& key);

}  // namespace les::tool
