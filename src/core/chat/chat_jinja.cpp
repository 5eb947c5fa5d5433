// Rendering a model's own chat template (chat_jinja.h).
#include "core/chat/chat_jinja.h"

#include "core/chat/jinja/format.h"

namespace les::chat {

Result<std::string> render_jinja_chat(const jinja::Template& tmpl, const JinjaChat& chat,
                                      const jinja::RenderOptions& options) {
  if (!chat.messages.is_array()) return invalid_argument_error("chat template: messages is not a list");
  for (size_t i = 0; i < chat.messages.size(); ++i)
    if (!chat.messages[i].is_object())
      return invalid_argument_error("chat template: message " + std::to_string(i) + " is not an object");
  if (!chat.extra.is_object()) return invalid_argument_error("chat template: extra variables are not an object");
  // transformers: render(messages=..., tools=..., documents=..., add_generation_prompt=...,
  //                      **special_tokens_map, **kwargs)
  jinja::Variables vars;
  LES_ASSIGN_OR_RETURN(jinja::Value messages, jinja::from_json(chat.messages));
  vars.emplace_back("messages", std::move(messages));
  LES_ASSIGN_OR_RETURN(jinja::Value tools, jinja::from_json(chat.tools));
  vars.emplace_back("tools", std::move(tools));
  LES_ASSIGN_OR_RETURN(jinja::Value documents, jinja::from_json(chat.documents));
  vars.emplace_back("documents", std::move(documents));
  vars.emplace_back("add_generation_prompt", jinja::Value(chat.add_generation_prompt));
  if (chat.bos_token) vars.emplace_back("bos_token", jinja::Value(*chat.bos_token));
  if (chat.eos_token) vars.emplace_back("eos_token", jinja::Value(*chat.eos_token));
  for (const auto& [key, value] : chat.extra.items()) {
    LES_ASSIGN_OR_RETURN(jinja::Value v, jinja::from_json(value));
    auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& kv) { return kv.first == key; });
    if (it != vars.end()) it->second = std::move(v);
    else vars.emplace_back(key, std::move(v));
  }
  return tmpl.render(vars, options);
}

}  // namespace les::chat
