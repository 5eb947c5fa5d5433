// See routes.h.
#include "serve/routes.h"

#include <cctype>
#include <string_view>

#include "serve/body.h"
#include "serve/completion.h"
#include "serve/cors.h"
#include "serve/http.h"
#include "serve/reply.h"
#include "serve/tokenize.h"

namespace les::tool {
namespace {

using nlohmann::json;

// Whether httplib reads a body for the request's method (its expect_content).
bool has_body(const httplib::Request& req) {
  return req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE" ||
         req.method == "PRI";
}

json health_body(const ServeEngine& engine) {
  const RequestQueue::Counts n = engine.queue_counts();
  return {{"status", "ok"},
          {"requests", {{"running", n.running}, {"waiting", n.waiting}, {"max_waiting", n.max_waiting}}}};
}

}  // namespace

bool authorized(const ServeState& state, const httplib::Request& req) {
  const bool needs_key = req.path.rfind("/v1/", 0) == 0 || req.path == "/tokenize" || req.path == "/detokenize" ||
                         req.path == "/metrics";
  return state.api_key.empty() || !needs_key || bearer_matches(req.get_header_value("Authorization"), state.api_key);
}

void refuse_unauthorized(const httplib::Request& req, httplib::Response& res) {
  res.set_header("WWW-Authenticate", "Bearer");
  send_error(req, res, 401, "invalid or missing API key (send the header Authorization: Bearer KEY)",
             "authentication_error", "", "invalid_api_key");
}

bool bearer_matches(const std::string& header, const std::string& key) {
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return false;
  size_t start = kScheme.size();
  if (header[start] != ' ') return false;
  while (start < header.size() && header[start] == ' ') ++start;
  const std::string_view given(header.data() + start, header.size() - start);
  // Every byte of the key is compared whatever was sent (a shorter one is
  // read as padded with zeros), and a length mismatch only sets a bit: the
  // time depends on the key's length alone, so it reveals neither where the
  // first difference is nor how long the key is (issue 36: it returned early
  // on a length mismatch).
  unsigned char diff = given.size() != key.size() ? 1 : 0;
  for (size_t i = 0; i < key.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= static_cast<unsigned char>(g ^ static_cast<unsigned char>(key[i]));
  }
  return diff == 0;
}

void install_routes(httplib::Server& server, ServeState& state) {
  server.set_payload_max_length(state.max_body_bytes);
  server.set_pre_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
    // A CORS preflight carries no credentials: answered before the key check (cors.h).
    if (!state.cors_origins.empty() && is_cors_preflight(req)) {
      answer_cors_preflight(req, res);
      return httplib::Server::HandlerResponse::Handled;
    }
    // A request with a body is checked once its body is read (by the
    // completion routes), so that the body is not left on the connection.
    if (authorized(state, req) || has_body(req)) return httplib::Server::HandlerResponse::Unhandled;
    refuse_unauthorized(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  server.Get("/health", [&state](const httplib::Request& req, httplib::Response& res) {
    const ServeEngine* engine = state.engine.load();
    if (engine == nullptr) return send_error(req, res, 503, "the model is loading", "unavailable_error");
    send_json(res, 200, health_body(*engine));
  });
  server.Get("/v1/models", [&state](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, models_list(state.model_id, state.created));
  });
  // The OpenAI SDKs' models.retrieve(id): the served model, or 404 model_not_found.
  server.Get(R"(/v1/models/(.+))", [&state](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (id == state.model_id) return send_json(res, 200, model_object(state.model_id, state.created));
    send_error(req, res, 404, "the model '" + id + "' does not exist (this server has '" + state.model_id + "')",
               "invalid_request_error", "model", "model_not_found");
  });
  server.Post("/v1/chat/completions", [&state](const httplib::Request& req, httplib::Response& res,
                                               const httplib::ContentReader& reader) {
    handle_completion(state, Endpoint::kChat, req, res, reader);
  });
  server.Post("/tokenize", [&state](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) { handle_tokenize(state, req, res, reader); });
  server.Post("/detokenize", [&state](const httplib::Request& req, httplib::Response& res,
                                      const httplib::ContentReader& reader) {
    handle_detokenize(state, req, res, reader);
  });
  // Every reply, errors and streams included, passes here before its headers are written.
  server.set_post_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
    add_cors_headers(state.cors_origins, req, res);
    state.metrics.count_reply(req.path, res.status);
  });
  server.Get("/metrics", [&state](const httplib::Request&, httplib::Response& res) {
    const ServeEngine* engine = state.engine.load();
    RequestQueue::Counts queue;
    les_stream_stats stream{};
    const bool streamed = engine != nullptr && engine->stream_stats(&stream);
    if (engine != nullptr) queue = engine->queue_counts();
    res.status = 200;
    res.set_content(state.metrics.render(queue, streamed ? &stream : nullptr), "text/plain; version=0.0.4");
  });
  server.Post("/v1/completions", [&state](const httplib::Request& req, httplib::Response& res,
                                          const httplib::ContentReader& reader) {
    handle_completion(state, Endpoint::kCompletion, req, res, reader);
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
                     " (this server has GET /health, GET /v1/models, GET /v1/models/ID, POST /v1/chat/completions, "
                     "POST /v1/completions, POST /tokenize, POST /detokenize, GET /metrics)",
                 "not_found_error");
    else if (res.status == 413)
      send_error(req, res, 413, "the request body is too large: " + body_limit_text(state.max_body_bytes),
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
