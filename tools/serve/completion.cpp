// See completion.h.
#include "serve/completion.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "serve/body.h"
#include "serve/connection.h"
#include "serve/http.h"
#include "serve/json_limits.h"
#include "serve/reply.h"

namespace les::tool {
namespace {

using nlohmann::json;

constexpr const char* kShuttingDown = "the server is shutting down";

// A body at least this large has its parse's freed memory returned to the
// system (return_freed_memory: a pass over the heap, not worth it for small ones).
constexpr size_t kLargeBody = 256 * 1024;

// Writes `text` unless the client has gone; false when it has.
bool sink_write(httplib::DataSink& sink, const std::string& text) {
  return sink.is_writable() && sink.write(text.data(), text.size());
}

// The error object of an engine failure.
json failure_body(const GenerationOutcome& out) {
  return error_body(std::string("generation failed: ") + les_status_name(out.status) + ": " + out.error,
                    "server_error");
}

// A streamed request whose turn has come: its place in the queue (given up
// once the text is generated), its job and the head every chunk repeats.
struct StreamState {
  ServeEngine* engine;
  std::shared_ptr<Turn> turn;
  std::shared_ptr<const GenerationJob> job;
  ReplyHead head;
  bool include_usage;
};

// The whole streamed reply; false when the client went away (httplib then
// drops the connection).
bool stream_reply(StreamState& r, httplib::DataSink& sink) {
  const bool chat = r.head.endpoint == Endpoint::kChat;
  if (chat) sink_write(sink, sse_event(completion_chunk(r.head, nullptr, true, nullptr)));
  const auto emit = [&](std::string_view piece) {
    if (piece.empty()) return sink.is_writable();
    const std::string text(piece);
    return sink_write(sink, sse_event(completion_chunk(r.head, &text, false, nullptr)));
  };
  const GenerationOutcome out = r.engine->run(*r.job, emit);
  r.turn.reset();  // the next request may start while this one's end is written
  if (out.client_gone) return false;
  if (out.shutting_down) {
    sink_write(sink, sse_event(error_body(kShuttingDown, "unavailable_error")));
  } else if (out.finish_reason == nullptr) {
    sink_write(sink, sse_event(failure_body(out)));
  } else {
    sink_write(sink, sse_event(completion_chunk(r.head, nullptr, false, out.finish_reason)));
    if (r.include_usage) sink_write(sink, sse_event(usage_chunk(r.head, out.usage)));
  }
  sink_write(sink, kSseDone);
  sink.done();
  return true;
}

// The whole (non-streamed) reply, generated now on this thread.
void whole_reply(ServeEngine& engine, const GenerationJob& job, const ReplyHead& head, const ConnectionWatch& watch,
                 const httplib::Request& req, httplib::Response& res) {
  std::string text;
  const auto emit = [&](std::string_view piece) {
    text += piece;
    return watch.alive();
  };
  const GenerationOutcome out = engine.run(job, emit);
  if (out.client_gone) {
    send_json(res, 499, error_body("the client closed the connection", "invalid_request_error"));  // unread
  } else if (out.shutting_down) {
    send_error(req, res, 503, kShuttingDown + std::string(": the generation was stopped"), "unavailable_error");
  } else if (out.finish_reason == nullptr) {
    send_json(res, 500, failure_body(out));  // the engine logged the failure
  } else {
    send_json(res, 200, completion_reply(head, text, out.finish_reason, out.usage));
  }
}

}  // namespace

void handle_completion(ServeState& state, Endpoint endpoint, const httplib::Request& req, httplib::Response& res,
                       const httplib::ContentReader& reader) {
  std::string body;
  BodyError body_error;
  if (!read_request_body(req, res, reader, state.max_body_bytes, &body, &body_error)) {
    send_error(req, res, body_error.status, body_error.message, "invalid_request_error");
    if (body_error.close_connection) close_after_reply(res);
    return;
  }
  if (!authorized(state, req)) return refuse_unauthorized(req, res);
  ServeEngine* engine = state.engine.load();
  if (engine == nullptr) {
    res.set_header("Retry-After", "1");
    return send_error(req, res, 503, "the model is loading", "unavailable_error");
  }
  // The body's shape is checked before it is parsed, and parses take turns
  // (json_limits.h): nesting or values beyond the limits cost no nodes.
  if (const std::string shape = check_json_shape(body, state.json_limits); !shape.empty())
    return send_error(req, res, 400, shape, "invalid_request_error");
  RequestError error;
  std::optional<CompletionRequest> request;
  {
    ParseGate::Ticket turn(state.parse_gate);
    request = parse_completion_request(body, endpoint, &error, state.image_limits);
  }
  const bool large = body.size() >= kLargeBody;
  body = std::string();  // the parsed request holds what is needed
  if (large) return_freed_memory();  // the parse's nodes, freed, go back to the system
  if (!request) return send_error(req, res, 400, error.message, "invalid_request_error", error.param);
  auto job = std::make_shared<GenerationJob>();
  std::string code;
  if (!engine->prepare(*request, job.get(), &error, &code))
    return send_error(req, res, 400, error.message, "invalid_request_error", error.param, code);

  RequestQueue::Refusal why = RequestQueue::Refusal::kNone;
  std::shared_ptr<Turn> turn = engine->enter(&why);
  if (turn == nullptr) {
    if (why == RequestQueue::Refusal::kStopping) return send_error(req, res, 503, kShuttingDown, "unavailable_error");
    res.set_header("Retry-After", "1");
    const RequestQueue::Counts n = engine->queue_counts();
    return send_error(req, res, 503,
                      "the server is busy: one request is generating and " + std::to_string(n.max_waiting) +
                          " are waiting, as many as it queues (les serve --max-queue); retry later",
                      "unavailable_error", "", "queue_full");
  }
  const ConnectionWatch watch(req);
  switch (engine->wait_turn(*turn, [&watch] { return watch.alive(); })) {
    case RequestQueue::Wait::kClientGone:
      return send_error(req, res, 499, "the client closed the connection while its request waited",
                        "invalid_request_error");
    case RequestQueue::Wait::kStopping:
      return send_error(req, res, 503, kShuttingDown, "unavailable_error");
    case RequestQueue::Wait::kReady:
      break;
  }
  const ReplyHead head = new_reply_head(endpoint, state.model_id);
  if (!request->stream) return whole_reply(*engine, *job, head, watch, req, res);
  auto stream = std::make_shared<StreamState>(StreamState{engine, std::move(turn), job, head, request->include_usage});
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [stream](size_t, httplib::DataSink& sink) {
    return stream_reply(*stream, sink);
  });
}

}  // namespace les::tool
