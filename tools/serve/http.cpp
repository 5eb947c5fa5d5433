// See http.h.
#include "serve/http.h"

#include <cstdio>
#include <memory>

#include "serve/reply.h"

namespace les::tool {

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

void send_error(const httplib::Request& req, httplib::Response& res, int status, const std::string& message,
                const std::string& type, const std::string& param, const std::string& code) {
  std::fprintf(stderr, "les serve: %d %s %s: %s\n", status, req.method.c_str(), req.path.c_str(), message.c_str());
  send_json(res, status, error_body(message, type, param, code));
}

void close_after_reply(httplib::Response& res) {
  // httplib 0.11 keeps a connection open unless the request asked to close
  // it, or writing the reply fails: so the body goes out through a content
  // provider that writes it whole and then reports failure.
  auto body = std::make_shared<std::string>(std::move(res.body));
  res.body.clear();
  const std::string type = res.get_header_value("Content-Type");
  res.set_header("Connection", "close");
  res.set_content_provider(body->size(), type, [body](size_t offset, size_t length, httplib::DataSink& sink) {
    sink.write(body->data() + offset, length);
    return false;
  });
}

}  // namespace les::tool
