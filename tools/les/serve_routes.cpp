// See serve_routes.h.
#include "les/serve_routes.h"

#include <cstdio>
#include <memory>
#include <string_view>

#include "les/serve_reply.h"

namespace les::tool {
namespace {

using nlohmann::json;

constexpr const char* kJson = "application/json";

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_json(body), kJson);
}

// An error reply, logged as one line on stderr.
void send_error(const httplib::Request& req, httplib::Response& res, int status, const std::string& message,
                const std::string& type, const std::string& param = "", const std::string& code = "") {
  std::fprintf(stderr, "les serve: %d %s %s: %s\n", status, req.method.c_str(), req.path.c_str(), message.c_str());
  send_json(res, status, error_body(message, type, param, code));
}

// Whether `header` is "Bearer KEY", compared in time independent of where
// the first difference is.
bool bearer_matches(const std::string& header, const std::string& key) {
  const std::string want = "Bearer " + key;
  if (header.size() != want.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(header[i] ^ want[i]);
  return diff == 0;
}

// Writes `text` unless the client has gone; false when it has.
bool sink_write(httplib::DataSink& sink, const std::string& text) {
  return sink.is_writable() && sink.write(text.data(), text.size());
}

// The error object for a generation that did not finish.
json outcome_error(const GenerationOutcome& out) {
  if (out.shutting_down) return error_body("the server is shutting down", "unavailable_error");
  return error_body(std::string("generation failed: ") + les_status_name(out.status) + ": " + out.error,
                    "server_error");
}

struct Reply {
  Engine* engine;
  std::shared_ptr<const GenerationJob> job;
  ReplyHead head;
  bool include_usage;
};

// The whole streamed reply; false when the client went away (httplib then
// drops the connection).
bool stream_reply(const Reply& r, httplib::DataSink& sink) {
  const bool chat = r.head.endpoint == Endpoint::kChat;
  const auto alive = [&] { return sink.is_writable(); };
  const auto start = [&] {
    if (chat) sink_write(sink, sse_event(completion_chunk(r.head, nullptr, true, nullptr)));
  };
  const auto emit = [&](std::string_view piece) {
    if (piece.empty()) return sink.is_writable();
    const std::string text(piece);
    return sink_write(sink, sse_event(completion_chunk(r.head, &text, false, nullptr)));
  };
  const GenerationOutcome out = r.engine->generate(*r.job, alive, start, emit);
  if (out.client_gone) return false;
  if (out.finish_reason == nullptr) {
    sink_write(sink, sse_event(outcome_error(out)));
  } else {
    sink_write(sink, sse_event(completion_chunk(r.head, nullptr, false, out.finish_reason)));
    if (r.include_usage) sink_write(sink, sse_event(usage_chunk(r.head, out.usage)));
  }
  sink_write(sink, kSseDone);
  sink.done();
  return true;
}

// The whole JSON reply, written once the text is complete.
bool whole_reply(const Reply& r, httplib::DataSink& sink) {
  std::string text;
  const auto alive = [&] { return sink.is_writable(); };
  const auto emit = [&](std::string_view piece) {
    text += piece;
    return sink.is_writable();
  };
  const GenerationOutcome out = r.engine->generate(*r.job, alive, [] {}, emit);
  if (out.client_gone) return false;
  const json body =
      out.finish_reason == nullptr ? outcome_error(out) : completion_reply(r.head, text, out.finish_reason, out.usage);
  sink_write(sink, dump_json(body));
  sink.done();
  return true;
}

void handle_completion(ServeState& state, Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
  Engine* engine = state.engine.load();
  if (engine == nullptr) return send_error(req, res, 503, "the model is loading", "unavailable_error");
  RequestError error;
  std::optional<CompletionRequest> request = parse_completion_request(req.body, endpoint, &error);
  if (!request) return send_error(req, res, 400, error.message, "invalid_request_error", error.param);
  auto job = std::make_shared<GenerationJob>();
  std::string code;
  if (!engine->prepare(*request, job.get(), &error, &code))
    return send_error(req, res, 400, error.message, "invalid_request_error", error.param, code);
  Reply reply{engine, std::move(job), new_reply_head(endpoint, state.model_id), request->include_usage};
  if (request->stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [reply](size_t, httplib::DataSink& sink) {
      return stream_reply(reply, sink);
    });
  } else {
    res.set_chunked_content_provider(kJson, [reply](size_t, httplib::DataSink& sink) {
      return whole_reply(reply, sink);
    });
  }
}

}  // namespace

void install_routes(httplib::Server& server, ServeState& state) {
  server.set_payload_max_length(state.max_body_bytes);
  server.set_pre_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
    if (state.api_key.empty() || req.path.rfind("/v1/", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
    if (bearer_matches(req.get_header_value("Authorization"), state.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer");
    send_error(req, res, 401, "invalid or missing API key (send the header Authorization: Bearer KEY)",
               "authentication_error", "", "invalid_api_key");
    return httplib::Server::HandlerResponse::Handled;
  });
  server.Get("/health", [&state](const httplib::Request& req, httplib::Response& res) {
    if (state.engine.load() == nullptr) return send_error(req, res, 503, "the model is loading", "unavailable_error");
    send_json(res, 200, {{"status", "ok"}});
  });
  server.Get("/v1/models", [&state](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, models_list(state.model_id, state.created));
  });
  server.Post("/v1/chat/completions", [&state](const httplib::Request& req, httplib::Response& res) {
    handle_completion(state, Endpoint::kChat, req, res);
  });
  server.Post("/v1/completions", [&state](const httplib::Request& req, httplib::Response& res) {
    handle_completion(state, Endpoint::kCompletion, req, res);
  });
  // Replies httplib makes itself (404 no route, 413 body too large, 400 a
  // malformed request line) get an error object too; the handlers' own
  // errors already have one.
  server.set_error_handler(httplib::Server::HandlerWithResponse([&state](const httplib::Request& req,
                                                                         httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 404)
      send_error(req, res, 404,
                 "no route " + req.method + " " + req.path +
                     " (this server has GET /health, GET /v1/models, POST /v1/chat/completions, POST /v1/completions)",
                 "not_found_error");
    else if (res.status == 413)
      send_error(req, res, 413,
                 "the request body is larger than this server takes (" + std::to_string(state.max_body_bytes) +
                     " bytes)",
                 "invalid_request_error");
    else
      send_error(req, res, res.status, "the request could not be read (HTTP " + std::to_string(res.status) + ")",
                 res.status < 500 ? "invalid_request_error" : "server_error");
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(req, res, 500, "internal error: " + what, "server_error");
  });
}

}  // namespace les::tool
