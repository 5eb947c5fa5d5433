// Rendering a conversation with a resolved template (chat_template.h): the
// model's own through the Jinja engine, or a built-in family's format from
// each message's role and text.
#include "core/chat/chat_template.h"

namespace les::chat {
namespace {

// The messages as (role, content) for a built-in family, which has no place
// for anything else.
Result<std::vector<Message>> plain_messages(const JinjaChat& chat, Family family) {
  const std::string fam = family_name(family);
  auto refuse = [&](const std::string& what) {
    return invalid_argument_error("the built-in chat template '" + fam + "' cannot render " + what +
                                  "; the model's own template (a GGUF with tokenizer.chat_template) can");
  };
  if (!chat.messages.is_array()) return invalid_argument_error("chat template: messages is not a list");
  if (!chat.tools.is_null() && !(chat.tools.is_array() && chat.tools.empty())) return refuse("tools");
  if (!chat.documents.is_null() && !(chat.documents.is_array() && chat.documents.empty())) return refuse("documents");
  std::vector<Message> out;
  out.reserve(chat.messages.size());
  for (size_t i = 0; i < chat.messages.size(); ++i) {
    const auto& m = chat.messages[i];
    const std::string at = "message " + std::to_string(i);
    if (!m.is_object()) return invalid_argument_error("chat template: " + at + " is not an object");
    if (!m.contains("role") || !m["role"].is_string())
      return invalid_argument_error("chat template: " + at + " has no string role");
    if (m.contains("tool_calls") && !m["tool_calls"].is_null() && !m["tool_calls"].empty())
      return refuse("tool calls (" + at + ")");
    Message msg;
    msg.role = m["role"].get<std::string>();
    if (m.contains("content") && m["content"].is_string()) msg.content = m["content"].get<std::string>();
    else if (m.contains("content") && !m["content"].is_null()) return refuse("non-text content (" + at + ")");
    out.push_back(std::move(msg));
  }
  return out;
}

}  // namespace

Result<std::string> render_chat(const ResolvedTemplate& t, const JinjaChat& chat, const jinja::RenderOptions& options) {
  if (t.source == TemplateSource::model) {
    if (!t.jinja) return internal_error("render_chat: the model's template was not parsed");
    auto text = render_jinja_chat(*t.jinja, chat, options);
    if (text.ok()) return text;
    std::string msg = "the model's chat template: " + text.status().message();
    if (text.status().code() == StatusCode::unsupported)
      msg += "; name a built-in template with --chat-template NAME (one of: " + template_names_list() + ")";
    return Status(text.status().code(), std::move(msg));
  }
  LES_ASSIGN_OR_RETURN(std::vector<Message> msgs, plain_messages(chat, t.family));
  return apply_template(t.family, msgs, chat.add_generation_prompt);
}

}  // namespace les::chat
