// See chat_prompt.h.
#include "common/chat_prompt.h"

#include <cstdio>

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

les_status render_chat_text(const les_model* model, const std::string& name, const std::vector<ChatTurn>& turns,
                            bool add_assistant_prefix, std::string* out, std::string* error) {
  std::vector<les_chat_message> msgs;
  msgs.reserve(turns.size());
  // A message is a C string (les_chat.h): a NUL byte would silently end it there.
  for (size_t i = 0; i < turns.size(); ++i) {
    const ChatTurn& t = turns[i];
    for (const std::string* s : {&t.role, &t.content})
      if (const size_t at = s->find('\0'); at != std::string::npos) {
        *error = "message " + std::to_string(i + 1) + " (" + (s == &t.role ? "role" : "role " + t.role) +
                 ") holds a NUL byte at byte " + std::to_string(at) +
                 ": a chat message cannot hold NUL bytes (remove them)";
        return LES_ERR_INVALID_ARGUMENT;
      }
    msgs.push_back({t.role.c_str(), t.content.c_str()});
  }
  size_t n = 0;
  char empty[1];  // enough for an empty text; otherwise n tells the size
  les_status st = les_chat_apply_template(model, name.c_str(), msgs.data(), msgs.size(), add_assistant_prefix,
                                          empty, sizeof empty, &n);
  if (st == LES_OK) {
    out->clear();
    return LES_OK;
  }
  if (n > 0) {
    out->assign(n + 1, '\0');
    st = les_chat_apply_template(model, name.c_str(), msgs.data(), msgs.size(), add_assistant_prefix, out->data(),
                                 out->size(), &n);
  }
  if (st != LES_OK) {
    *error = les_last_error();
    return st;
  }
  out->resize(n);
  return LES_OK;
}

int render_chat(const char* tool, const les_model* model, const std::string& name, const std::vector<ChatTurn>& turns,
                bool add_assistant_prefix, std::string* out) {
  std::string error;
  const les_status st = render_chat_text(model, name, turns, add_assistant_prefix, out, &error);
  if (st == LES_OK) return 0;
  std::fprintf(stderr, "les %s: chat template: %s\n", tool, error.c_str());
  return st == LES_ERR_INVALID_ARGUMENT ? 2 : 1;
}

}  // namespace les::tool
