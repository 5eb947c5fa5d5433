// `les serve --cors-origin ORIGIN[,ORIGIN...]`: Cross-Origin Resource Sharing
// (the Fetch standard's CORS protocol), so that a web page served from ORIGIN
// may call the API from a browser. Off by default (no CORS header at all).
//  - A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
//    answered 204 before routing and before the API key check (a browser
//    never sends credentials on a preflight): Access-Control-Allow-Methods
//    "GET, POST, OPTIONS", Access-Control-Allow-Headers the headers the
//    preflight asked for (the OpenAI SDKs send several X-Stainless-* ones)
//    or "Authorization, Content-Type", Access-Control-Max-Age 600.
//  - Every reply to a request whose Origin is allowed (errors and streams
//    included) carries Access-Control-Allow-Origin: "*" when the list is
//    "*", else the request's Origin, with Vary: Origin.
// A request from an origin not in the list gets no CORS header (the browser
// then refuses the page the reply).
//
// Thread-safety: functions of their arguments.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

namespace les::tool {

// Parses --cors-origin's value: "*", or a comma-separated list of origins
// "http[s]://host[:port]" (no path, no blanks inside, no control characters).
// Returns false with *error naming the bad entry.
bool parse_cors_origins(const std::string& value, std::vector<std::string>* origins, std::string* error);

// Whether `req` is a CORS preflight (OPTIONS with Origin and
// Access-Control-Request-Method headers).
bool is_cors_preflight(const httplib::Request& req);

// The 204 reply to a preflight (its Allow-Origin set by add_cors_headers).
void answer_cors_preflight(const httplib::Request& req, httplib::Response& res);

// Adds Access-Control-Allow-Origin (and Vary) to `res` when the request's
// Origin is in `origins` (or `origins` is {"*"}); nothing when `origins` is empty.
void add_cors_headers(const std::vector<std::string>& origins, const httplib::Request& req, httplib::Response& res);

}  // namespace les::tool
