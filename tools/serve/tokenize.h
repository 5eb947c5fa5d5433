// `les serve`: POST /tokenize and POST /detokenize, the shapes llama-server
// gives them (its clients and tools call them to count and inspect tokens).
//   /tokenize    {"content": STRING, "add_special": false, "parse_special":
//                true, "with_pieces": false} -> {"tokens": [ID, ...]}; with
//                with_pieces, {"tokens": [{"id": ID, "piece": STRING}, ...]}
//                (a piece that is not valid UTF-8 on its own, part of a
//                character, is given as an array of its bytes).
//                add_special adds BOS/EOS as the vocabulary asks;
//                parse_special turns control-token texts (<|im_start|>,
//                ...) into those tokens.
//   /detokenize  {"tokens": [ID, ...]} -> {"content": STRING} (the tokens'
//                bytes joined; stray bytes of a cut character become U+FFFD).
// Bad input gets 400 with an invalid_request_error naming the field (a body
// that is not a JSON object, content missing or not a string, a flag that is
// not a boolean, tokens not an array, an element that is not an integer id of
// the vocabulary: "tokens[3]: ..."); like the /v1/ routes they need the API
// key when --api-key is set, and their bodies are read and limited as the
// completion routes' (body.h, json_limits.h). They do not wait for the
// generation queue: tokenizing is thread-safe on the immutable model.
//
// Thread-safety: run on httplib's worker threads; `state` as in routes.h.
#pragma once

#include <httplib.h>

#include "serve/routes.h"

namespace les::tool {

void handle_tokenize(ServeState& state, const httplib::Request& req, httplib::Response& res,
                     const httplib::ContentReader& reader);
void handle_detokenize(ServeState& state, const httplib::Request& req, httplib::Response& res,
                       const httplib::ContentReader& reader);

}  // namespace les::tool
