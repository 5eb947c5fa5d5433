// C ABI: chat templates (les_chat.h) over core/chat.
#include <cstring>
#include <string>
#include <vector>

#include "capi_internal.h"
#include "core/chat/chat_template.h"
#include "core/gguf/gguf_reader.h"

using les::capi::fail;
using les::capi::guarded;

namespace {

// The template for (model, tmpl), logging the fallback warning on the model's logger.
les::Result<les::chat::ResolvedTemplate> resolve(const les_model* model, const char* tmpl, const char* fn) {
  const std::string requested = tmpl != nullptr ? tmpl : "";
  if (requested.empty() && (model == nullptr || !model->state))
    return les::invalid_argument_error(std::string(fn) + ": model is NULL and no template name was given");
  const std::string* model_template = nullptr;
  if (requested.empty()) {
    const les::gguf::Value* v = model->state->model->file().find("tokenizer.chat_template");
    if (v != nullptr) {
      model_template = v->as_string();
      if (model_template == nullptr)
        return les::format_error(std::string(fn) + ": tokenizer.chat_template is not a string");
    }
  }
  auto r = les::chat::resolve_template(requested, model_template);
  if (r.ok() && !r->warning.empty() && !model->state->warned_chat_fallback.exchange(true))
    model->state->logger->warn("{}", r->warning);
  return r;
}

les_chat_template_source to_c_source(les::chat::TemplateSource s) {
  switch (s) {
    case les::chat::TemplateSource::explicit_name: return LES_CHAT_TEMPLATE_NAMED;
    case les::chat::TemplateSource::model: return LES_CHAT_TEMPLATE_MODEL;
    case les::chat::TemplateSource::fallback: return LES_CHAT_TEMPLATE_FALLBACK;
  }
  return LES_CHAT_TEMPLATE_FALLBACK;
}

}  // namespace

extern "C" {

les_status les_chat_apply_template(const les_model* model, const char* tmpl, const les_chat_message* messages,
                                   size_t n_messages, bool add_assistant_prefix, char* buf, size_t buf_size,
                                   size_t* n_out) {
  return guarded("les_chat_apply_template", [&]() -> les_status {
    if (n_out == nullptr) return fail(les::invalid_argument_error("les_chat_apply_template: n_out is NULL"));
    *n_out = 0;
    if (messages == nullptr && n_messages > 0)
      return fail(les::invalid_argument_error("les_chat_apply_template: messages is NULL"));
    std::vector<les::chat::Message> msgs;
    msgs.reserve(n_messages);
    for (size_t i = 0; i < n_messages; ++i) {
      if (messages[i].role == nullptr || messages[i].content == nullptr)
        return fail(les::invalid_argument_error("les_chat_apply_template: message " + std::to_string(i) +
                                                " has a NULL role or content"));
      msgs.push_back({messages[i].role, messages[i].content});
    }
    auto r = resolve(model, tmpl, "les_chat_apply_template");
    if (!r.ok()) return fail(r.status());
    auto text = les::chat::apply_template(r->family, msgs, add_assistant_prefix);
    if (!text.ok()) return fail(text.status());
    *n_out = text->size();
    if (buf == nullptr || buf_size <= text->size())
      return fail(les::invalid_argument_error("les_chat_apply_template: the text needs " +
                                              std::to_string(text->size() + 1) + " bytes with its NUL; buf_size is " +
                                              std::to_string(buf_size)));
    std::memcpy(buf, text->data(), text->size());
    buf[text->size()] = '\0';
    return LES_OK;
  });
}

les_status les_chat_template_resolve(const les_model* model, const char* tmpl, const char** name,
                                     les_chat_template_source* source) {
  return guarded("les_chat_template_resolve", [&]() -> les_status {
    auto r = resolve(model, tmpl, "les_chat_template_resolve");
    if (!r.ok()) return fail(r.status());
    if (name != nullptr) *name = les::chat::family_name(r->family);
    if (source != nullptr) *source = to_c_source(r->source);
    return LES_OK;
  });
}

int32_t les_chat_template_count(void) { return static_cast<int32_t>(les::chat::template_names().size()); }

const char* les_chat_template_name(int32_t i) {
  const auto names = les::chat::template_names();
  if (i < 0 || static_cast<size_t>(i) >= names.size()) return nullptr;
  return names[static_cast<size_t>(i)].data();  // string literals: NUL-terminated
}

}  // extern "C"
