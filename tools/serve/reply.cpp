// See reply.h.
#include "serve/reply.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <random>

namespace les::tool {
namespace {

using nlohmann::json;

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

json head_json(const ReplyHead& h, const char* object) {
  return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}};
}

json finish(const char* reason) { return reason != nullptr ? json(reason) : json(nullptr); }

}  // namespace

ReplyHead new_reply_head(Endpoint endpoint, const std::string& model) {
  static const uint64_t start = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  static std::atomic<uint64_t> counter{0};
  char id[48];
  std::snprintf(id, sizeof id, "%s%016" PRIx64 "%08" PRIx64, endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-",
                start, counter.fetch_add(1) & 0xffffffffu);
  return {id, static_cast<int64_t>(std::time(nullptr)), model, endpoint};
}

json error_body(const std::string& message, const std::string& type, const std::string& param,
                const std::string& code) {
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", param.empty() ? json(nullptr) : json(param)},
            {"code", code.empty() ? json(nullptr) : json(code)}}}};
}

json completion_reply(const ReplyHead& head, const std::string& text, const char* finish_reason, const Usage& usage) {
  const bool chat = head.endpoint == Endpoint::kChat;
  json choice = {{"index", 0}, {"finish_reason", finish(finish_reason)}};
  if (chat)
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  json j = head_json(head, chat ? "chat.completion" : "text_completion");
  j["choices"] = json::array({choice});
  j["usage"] = usage_json(usage);
  return j;
}

json completion_chunk(const ReplyHead& head, const std::string* text, bool role, const char* finish_reason) {
  const bool chat = head.endpoint == Endpoint::kChat;
  json choice = {{"index", 0}, {"finish_reason", finish(finish_reason)}};
  if (chat) {
    json delta = json::object();
    if (role) delta["role"] = "assistant";
    if (text != nullptr) delta["content"] = *text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text != nullptr ? *text : std::string();
  }
  json j = head_json(head, chat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array({choice});
  return j;
}

json usage_chunk(const ReplyHead& head, const Usage& usage) {
  json j = head_json(head, head.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array();
  j["usage"] = usage_json(usage);
  return j;
}

json model_object(const std::string& model, int64_t created) {
  return {{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "les"}};
}

json models_list(const std::string& model, int64_t created) {
  return {{"object", "list"}, {"data", json::array({model_object(model, created)})}};
}

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse_event(const json& j) { return "data: " + dump_json(j) + "\n\n"; }

}  // namespace les::tool
