// `les serve`: writing JSON replies and OpenAI error objects on a
// cpp-httplib response, shared by the routes.
//
// Thread-safety: functions of their arguments (one response per call).
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace les::tool {

// Sets `status` and the JSON body.
void send_json(httplib::Response& res, int status, const nlohmann::json& body);

// An error reply, {error: {message, type, param, code}} (reply.h),
// logged as one line on stderr ("les serve: STATUS METHOD PATH: message").
void send_error(const httplib::Request& req, httplib::Response& res, int status, const std::string& message,
                const std::string& type, const std::string& param = "", const std::string& code = "");

// Makes the connection close once `res` is written (Connection: close, and
// the server drops the socket): for a reply sent before the request's body
// was read to its end, whose rest must not be taken for a next request.
// Call after the reply's body is set.
void close_after_reply(httplib::Response& res);

}  // namespace les::tool
