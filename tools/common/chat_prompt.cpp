// See chat_prompt.h.
#include "common/chat_prompt.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace les::tool {
namespace {

int chat_error(const char* tool, les_status st) {
  std::fprintf(stderr, "les %s: chat template: %s\n", tool, les_last_error());
  return st == LES_ERR_INVALID_ARGUMENT ? 2 : 1;
}

}  // namespace

int resolve_chat_template(const char* tool, const les_model* model, const std::string& name) {
  const char* resolved = nullptr;
  les_chat_template_source source = LES_CHAT_TEMPLATE_NAMED;
  if (les_status st = les_chat_template_resolve(model, name.c_str(), &resolved, &source); st != LES_OK)
    return chat_error(tool, st);
  const char* from = source == LES_CHAT_TEMPLATE_NAMED   ? "--chat-template"
                     : source == LES_CHAT_TEMPLATE_MODEL ? "the model's tokenizer.chat_template"
                                                         : "fallback: the model has none";
  std::fprintf(stderr, "les %s: chat template %s (%s)\n", tool, resolved, from);
  return 0;
}

void add_chat_template_options(CLI::App* cmd, std::string& name, std::string& kwargs_json) {
  cmd->add_option("--chat-template", name,
                  "Chat template: the model's own by default (its Jinja tokenizer.chat_template), a variant of it "
                  "(tokenizer.chat_template.NAME, e.g. tool_use), or a built-in one by name (chatml, llama3, "
                  "mistral, gemma, ...)");
  cmd->add_option("--chat-template-kwargs", kwargs_json,
                  "Extra variables for the model's chat template, as a JSON object (e.g. '{\"enable_thinking\": "
                  "false}')");
}

bool check_template_kwargs(const char* tool, const std::string& kwargs_json) {
  if (kwargs_json.empty()) return true;
  const auto j = nlohmann::ordered_json::parse(kwargs_json, nullptr, /*allow_exceptions=*/false);
  const char* why = nullptr;
  if (j.is_discarded() || !j.is_object()) why = "is not a JSON object";
  else if (j.contains("messages") || j.contains("add_generation_prompt")) why = "may not set messages or add_generation_prompt";
  if (why == nullptr) return true;
  std::fprintf(stderr, "les %s: --chat-template-kwargs %s (e.g. '{\"enable_thinking\": false}')\n", tool, why);
  return false;
}

les_status render_chat_text(const les_model* model, const std::string& name, const std::vector<ChatTurn>& turns,
                            bool add_assistant_prefix, std::string* out, std::string* error,
                            const std::string& kwargs_json) {
  // The terminal tools' messages stay C-string clean (les_chat.h's messages are
  // C strings): a NUL byte is refused with where it is, not rendered.
  for (size_t i = 0; i < turns.size(); ++i) {
    const ChatTurn& t = turns[i];
    for (const std::string* s : {&t.role, &t.content})
      if (const size_t at = s->find('\0'); at != std::string::npos) {
        *error = "message " + std::to_string(i + 1) + " (" + (s == &t.role ? "role" : "role " + t.role) +
                 ") holds a NUL byte at byte " + std::to_string(at) +
                 ": a chat message cannot hold NUL bytes (remove them)";
        return LES_ERR_INVALID_ARGUMENT;
      }
  }
  nlohmann::ordered_json request = nlohmann::ordered_json::object();
  if (!kwargs_json.empty()) {
    request = nlohmann::ordered_json::parse(kwargs_json, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded() || !request.is_object()) {
      *error = "the template variables are not a JSON object";
      return LES_ERR_INVALID_ARGUMENT;
    }
  }
  request["messages"] = nlohmann::ordered_json::array();
  for (const ChatTurn& t : turns) request["messages"].push_back({{"role", t.role}, {"content", t.content}});
  request["add_generation_prompt"] = add_assistant_prefix;
  const std::string json = request.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  size_t n = 0;
  char empty[1];  // enough for an empty text; otherwise n tells the size
  les_status st = les_chat_apply_template_json(model, name.c_str(), json.c_str(), empty, sizeof empty, &n);
  if (st == LES_OK) {
    out->clear();
    return LES_OK;
  }
  if (n > 0) {
    out->assign(n + 1, '\0');
    st = les_chat_apply_template_json(model, name.c_str(), json.c_str(), out->data(), out->size(), &n);
  }
  if (st != LES_OK) {
    *error = les_last_error();
    return st;
  }
  out->resize(n);
  return LES_OK;
}

int render_chat(const char* tool, const les_model* model, const std::string& name, const std::vector<ChatTurn>& turns,
                bool add_assistant_prefix, std::string* out, const std::string& kwargs_json) {
  std::string error;
  const les_status st = render_chat_text(model, name, turns, add_assistant_prefix, out, &error, kwargs_json);
  if (st == LES_OK) return 0;
  std::fprintf(stderr, "les %s: chat template: %s\n", tool, error.c_str());
  return st == LES_ERR_INVALID_ARGUMENT ? 2 : 1;
}

}  // namespace les::tool
