// `les serve`: POST /v1/chat/completions and /v1/completions, from the body
// to the last byte of the reply.
//
// A request's way: its body is read (body.h: JSON whatever the
// Content-Type, at most ServeState::max_body_bytes), parsed and prepared
// (400 for what cannot be served as sent), then it takes a place in the
// queue (503 with Retry-After when every place is taken: queue.h) and
// waits for its turn on its HTTP thread, watching its connection (a client
// that goes away leaves the queue). Only when its turn comes is anything
// but an error sent:
//  - a whole reply (no "stream") is generated first and then sent: 200 with
//    the completion; 503 with an error object when the server's shutdown
//    stopped the generation; 500 with one when the engine failed. A client
//    that disconnects meanwhile (its socket reads end of file) stops the
//    generation at the next token.
//  - a streamed reply ("stream": true) is 200 with server-sent events as the
//    text is generated; a shutdown or an engine failure after it started
//    ends it with one more event, an error object, then `data: [DONE]`.
// A shutdown while a request waits for its turn is 503 for either kind.
//
// Thread-safety: runs on httplib's worker threads, any number at once.
#pragma once

#include <httplib.h>

#include "serve/request.h"
#include "serve/routes.h"

namespace les::tool {

// Handles one completion request (`reader` gives its body).
void handle_completion(ServeState& state, Endpoint endpoint, const httplib::Request& req, httplib::Response& res,
                       const httplib::ContentReader& reader);

}  // namespace les::tool
