// C ABI: chat templates (les_chat.h) over core/chat.
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "capi_internal.h"
#include "core/chat/chat_template.h"
#include "core/gguf/gguf_reader.h"

using les::capi::fail;
using les::capi::guarded;

namespace {

// The GGUF string under `key`, nullptr when absent; format error when not a string.
les::Result<const std::string*> model_string(const les_model* model, const std::string& key, const char* fn) {
  const les::gguf::Value* v = model->state->model->file().find(key);
  if (v == nullptr) return static_cast<const std::string*>(nullptr);
  const std::string* s = v->as_string();
  if (s == nullptr) return les::format_error(std::string(fn) + ": " + key + " is not a string");
  return s;
}

// The template for (model, tmpl): a family name, "" / "jinja" for the model's
// tokenizer.chat_template, or the name of a variant tokenizer.chat_template.NAME
// (e.g. tool_use). Logs the fallback warning on the model's logger, once.
les::Result<les::chat::ResolvedTemplate> resolve(const les_model* model, const char* tmpl, const char* fn) {
  std::string requested = tmpl != nullptr ? tmpl : "";
  const bool own = requested.empty() || requested == les::chat::kModelTemplateName;
  if (own && (model == nullptr || !model->state))
    return les::invalid_argument_error(std::string(fn) + ": model is NULL and no template name was given");
  const std::string* model_template = nullptr;
  if (own) {
    LES_ASSIGN_OR_RETURN(model_template, model_string(model, "tokenizer.chat_template", fn));
  } else if (!les::chat::family_from_name(requested) && model != nullptr && model->state) {
    LES_ASSIGN_OR_RETURN(model_template, model_string(model, "tokenizer.chat_template." + requested, fn));
    if (model_template != nullptr) requested = les::chat::kModelTemplateName;  // a named variant of the model's
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

// Renders `chat` (its bos/eos tokens filled in from the model's vocabulary)
// and writes it to the caller's buffer. The model's own template prints
// bos_token where transformers' tokenizer expects it; since LES's tokenizer
// adds BOS itself when the vocabulary says so, that leading text is removed.
les_status render(const les_model* model, const char* tmpl, les::chat::JinjaChat chat, char* buf, size_t buf_size,
                  size_t* n_out, const char* fn) {
  auto r = resolve(model, tmpl, fn);
  if (!r.ok()) return fail(r.status());
  std::string bos_text;
  bool add_bos = false;
  if (model != nullptr && model->state && model->state->tokenizer != nullptr) {
    const les::Vocab& vocab = model->state->tokenizer->vocab();
    if (vocab.bos() >= 0) chat.bos_token = bos_text = vocab.text(vocab.bos());
    if (vocab.eos() >= 0) chat.eos_token = vocab.text(vocab.eos());
    add_bos = vocab.add_bos();
  }
  auto text = les::chat::render_chat(*r, chat);
  if (!text.ok()) return fail(text.status());
  if (r->source == les::chat::TemplateSource::model && add_bos && !bos_text.empty() &&
      text->compare(0, bos_text.size(), bos_text) == 0)
    text->erase(0, bos_text.size());
  *n_out = text->size();
  if (buf == nullptr || buf_size <= text->size())
    return fail(les::invalid_argument_error(std::string(fn) + ": the text needs " + std::to_string(text->size() + 1) +
                                            " bytes with its NUL; buf_size is " + std::to_string(buf_size)));
  std::memcpy(buf, text->data(), text->size());
  buf[text->size()] = '\0';
  return LES_OK;
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
    les::chat::JinjaChat chat;
    for (size_t i = 0; i < n_messages; ++i) {
      if (messages[i].role == nullptr || messages[i].content == nullptr)
        return fail(les::invalid_argument_error("les_chat_apply_template: message " + std::to_string(i) +
                                                " has a NULL role or content"));
      if (messages[i].role[0] == '\0')
        return fail(les::invalid_argument_error("les_chat_apply_template: message " + std::to_string(i) +
                                                " has an empty role"));
      nlohmann::ordered_json m;
      m["role"] = messages[i].role;
      m["content"] = messages[i].content;
      chat.messages.push_back(std::move(m));
    }
    chat.add_generation_prompt = add_assistant_prefix;
    return render(model, tmpl, std::move(chat), buf, buf_size, n_out, "les_chat_apply_template");
  });
}

les_status les_chat_apply_template_json(const les_model* model, const char* tmpl, const char* request_json, char* buf,
                                        size_t buf_size, size_t* n_out) {
  return guarded("les_chat_apply_template_json", [&]() -> les_status {
    const char* fn = "les_chat_apply_template_json";
    if (n_out == nullptr) return fail(les::invalid_argument_error(std::string(fn) + ": n_out is NULL"));
    *n_out = 0;
    if (request_json == nullptr) return fail(les::invalid_argument_error(std::string(fn) + ": request_json is NULL"));
    auto req = nlohmann::ordered_json::parse(request_json, nullptr, /*allow_exceptions=*/false);
    if (req.is_discarded() || !req.is_object())
      return fail(les::invalid_argument_error(std::string(fn) + ": request_json is not a JSON object"));
    if (!req.contains("messages") || !req["messages"].is_array())
      return fail(les::invalid_argument_error(std::string(fn) + ": request_json has no \"messages\" list"));
    les::chat::JinjaChat chat;
    for (auto& [key, value] : req.items()) {
      if (key == "messages") {
        chat.messages = std::move(value);
      } else if (key == "tools") {
        chat.tools = std::move(value);
      } else if (key == "documents") {
        chat.documents = std::move(value);
      } else if (key == "add_generation_prompt") {
        if (!value.is_boolean())
          return fail(les::invalid_argument_error(std::string(fn) + ": \"add_generation_prompt\" is not a boolean"));
        chat.add_generation_prompt = value.get<bool>();
      } else {
        chat.extra[key] = std::move(value);
      }
    }
    return render(model, tmpl, std::move(chat), buf, buf_size, n_out, fn);
  });
}

les_status les_chat_template_resolve(const les_model* model, const char* tmpl, const char** name,
                                     les_chat_template_source* source) {
  return guarded("les_chat_template_resolve", [&]() -> les_status {
    auto r = resolve(model, tmpl, "les_chat_template_resolve");
    if (!r.ok()) return fail(r.status());
    if (name != nullptr)
      *name = r->source == les::chat::TemplateSource::model ? les::chat::kModelTemplateName.data()
                                                             : les::chat::family_name(r->family);
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
