// `les serve`: the JSON the OpenAI API answers with: completions
// (chat.completion, text_completion), their streamed chunks as server-sent
// events, usage, the model list and error objects.
//
// Shapes (OpenAI's):
//   chat:   {id, object: "chat.completion", created, model, choices: [{index: 0,
//            message: {role: "assistant", content}, finish_reason}], usage}
//   text:   {id, object: "text_completion", created, model, choices: [{index: 0,
//            text, finish_reason}], usage}
//   chunk:  {id, object: "chat.completion.chunk" | "text_completion", created,
//            model, choices: [{index: 0, delta: {role?, content?} | text,
//            finish_reason}]}; the usage chunk has choices [] and usage
//   usage:  {prompt_tokens, completion_tokens, total_tokens}
//   error:  {error: {message, type, param, code}}
// `created` is Unix time in seconds; finish_reason "stop" (end of text or a
// stop string) or "length" (max_tokens or a full context).
//
// Thread-safety: pure functions, except new_reply_id (thread-safe).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "serve/request.h"

namespace les::tool {

// What every reply and chunk of one request repeats.
struct ReplyHead {
  std::string id;       // "chatcmpl-..." or "cmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;    // the served model's id
  Endpoint endpoint = Endpoint::kChat;
};

struct Usage {
  int32_t prompt_tokens = 0;      // the whole prompt, reused prefix included
  int32_t completion_tokens = 0;  // tokens generated
};

// A fresh head: a unique id ("chatcmpl-" or "cmpl-" and 24 hex digits from a
// random start and a counter) and the time now.
ReplyHead new_reply_head(Endpoint endpoint, const std::string& model);

// {error: {message, type, param, code}} (param, code null when empty). Types
// as OpenAI uses them: invalid_request_error, authentication_error,
// not_found_error, server_error, unavailable_error.
nlohmann::json error_body(const std::string& message, const std::string& type, const std::string& param = "",
                          const std::string& code = "");

// The whole (non-streamed) reply.
nlohmann::json completion_reply(const ReplyHead& head, const std::string& text, const char* finish_reason,
                                const Usage& usage);

// One streamed chunk: `text` (content delta; nullptr: none), the assistant
// role announced (the first chat chunk), `finish_reason` (nullptr: null).
nlohmann::json completion_chunk(const ReplyHead& head, const std::string* text, bool role, const char* finish_reason);

// The last chunk with stream_options.include_usage: choices [], usage.
nlohmann::json usage_chunk(const ReplyHead& head, const Usage& usage);

// One model: {id, object: "model", created, owned_by: "les"} (GET /v1/models/{id}).
nlohmann::json model_object(const std::string& model, int64_t created);

// /v1/models: {object: "list", data: [model_object]}.
nlohmann::json models_list(const std::string& model, int64_t created);

// JSON text; invalid UTF-8 in strings becomes U+FFFD instead of throwing.
std::string dump_json(const nlohmann::json& j);

// One server-sent event: "data: JSON\n\n".
std::string sse_event(const nlohmann::json& j);

// The stream's end: "data: [DONE]\n\n".
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace les::tool
