// The `les serve` tests' side of the wire: a `les serve` child process on a
// loopback port (--port 0: it picks a free one and prints it) and requests
// through cpp-httplib's client: whole JSON replies and server-sent event
// streams. Header-only, for the tools_test_cli_serve* tests (which link
// cpp-httplib).
#pragma once

#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/child_process.h"
#include "support/cli_tool.h"

namespace les::test::serve {

using nlohmann::json;

inline constexpr const char* kModel = "trained/tiny-qwen3moe-Q4_K_M.gguf";
inline constexpr const char* kStory = "CHAPTER XII.\nIn the year 1794, Emily";

// A `les serve` child, serving (it printed "listening on", so /health is
// 200) when constructed.
struct Server {
  std::unique_ptr<ChildProcess> child;
  std::string host = "127.0.0.1";
  int port = 0;

  explicit Server(const std::string& model, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {les_binary(), "serve", "-m", model, "--port", "0", "-t", "1"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (size_t i = 0; i + 1 < extra.size(); ++i)
      if (extra[i] == "--host") host = extra[i + 1];
    child = std::make_unique<ChildProcess>(argv);
    const std::string marker = "les serve: listening on http://" + host + ":";
    INFO(child->err());
    REQUIRE(child->wait_for_stderr(marker, 120));
    port = std::stoi(child->err().substr(child->err().find(marker) + marker.size()));
    REQUIRE(port > 0);
  }

  httplib::Client client() const {
    httplib::Client c(host, port);
    c.set_read_timeout(120, 0);
    return c;
  }

  // The number the ready line gives for `label` (e.g. "request bodies up to ").
  long ready_number(const std::string& label) const {
    return static_cast<long>(number_after(child->err(), label));
  }

  // `sig` (SIGTERM by default), then the exit code (0 for a clean stop).
  int stop(int sig = SIGTERM) {
    child->signal(sig);
    REQUIRE(child->wait(60));
    INFO("stderr: " << child->err());
    CHECK(child->term_signal() == 0);
    return child->exit_code();
  }
};

struct Reply {
  int status = -1;  // -1: no HTTP reply
  json body;
  httplib::Headers headers;
};

inline Reply post(httplib::Client& c, const std::string& path, const std::string& body,
                  const httplib::Headers& headers = {}, const std::string& content_type = "application/json") {
  auto r = c.Post(path.c_str(), headers, body, content_type.c_str());
  if (!r) return {};
  INFO(path << " " << body.substr(0, 300) << " -> " << r->status << " " << r->body);
  Reply out{r->status, json::parse(r->body, nullptr, false), r->headers};
  REQUIRE_FALSE(out.body.is_discarded());
  return out;
}

inline Reply get(httplib::Client& c, const std::string& path, const httplib::Headers& headers = {}) {
  auto r = c.Get(path.c_str(), headers);
  if (!r) return {};
  Reply out{r->status, json::parse(r->body, nullptr, false), r->headers};
  REQUIRE_FALSE(out.body.is_discarded());
  return out;
}

// A streamed reply: the events' JSON (without the final [DONE]), whether it
// ended with `data: [DONE]`, and the text of its deltas. A reply that is
// not 200 is not a stream: its JSON is in `error_body`.
struct Stream {
  int status = -1;
  std::vector<json> events;
  bool done = false;
  std::string text;
  json error_body;
};

// POSTs `body` and reads server-sent events; with `disconnect_after` > 0 the
// client closes the connection after that many bytes of body. `started` (when
// given) is set once the first bytes arrive.
inline Stream post_stream(httplib::Client& c, const std::string& path, const std::string& body,
                          size_t disconnect_after = 0, std::atomic<bool>* started = nullptr) {
  std::string raw;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    raw.append(data, n);
    if (started != nullptr) started->store(true);
    return disconnect_after == 0 || raw.size() < disconnect_after;
  };
  auto r = c.send(req);
  Stream s;
  if (r) s.status = r->status;
  if (disconnect_after > 0) return s;
  REQUIRE(r);
  INFO("stream: " << raw);
  if (s.status != 200) {
    s.error_body = json::parse(raw, nullptr, false);
    REQUIRE_FALSE(s.error_body.is_discarded());
    return s;
  }
  size_t pos = 0;
  while (pos < raw.size()) {
    const size_t end = raw.find("\n\n", pos);
    REQUIRE(end != std::string::npos);  // every event ends with a blank line
    const std::string event = raw.substr(pos, end - pos);
    pos = end + 2;
    REQUIRE(event.rfind("data: ", 0) == 0);
    REQUIRE_FALSE(s.done);  // nothing after [DONE]
    if (event == "data: [DONE]") {
      s.done = true;
      continue;
    }
    json j = json::parse(event.substr(6), nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    if (j.contains("choices") && !j["choices"].empty()) {
      const json& choice = j["choices"][0];
      if (choice.contains("delta") && choice["delta"].contains("content"))
        s.text += choice["delta"]["content"].get<std::string>();
      if (choice.contains("text")) s.text += choice["text"].get<std::string>();
    }
    s.events.push_back(std::move(j));
  }
  return s;
}

inline std::string chat_body(const std::string& user, int max_tokens, bool stream, const std::string& extra = "") {
  json j = {{"model", "anything"},
            {"messages", json::array({{{"role", "user"}, {"content", user}}})},
            {"temperature", 0},
            {"max_tokens", max_tokens},
            {"stream", stream}};
  if (!extra.empty()) j.update(json::parse(extra));
  return j.dump();
}

}  // namespace les::test::serve
