/*
 * les_chat.h: chat templates. Turns a conversation into the prompt text a
 * chat model was trained on. Part of the LES C ABI; include <les/les.h>.
 *
 * A model's own template: the Jinja source in the GGUF's
 * `tokenizer.chat_template` (or a named variant, `tokenizer.chat_template.NAME`,
 * e.g. tool_use), rendered by LES's Jinja engine the way Hugging Face's
 * `tokenizer.apply_chat_template` renders it (same variables: messages,
 * tools, documents, add_generation_prompt, bos_token, eos_token and extra
 * keyword arguments such as enable_thinking; same Jinja2 semantics; byte for
 * byte, checked against Jinja2 on 59 real templates). This is the default for
 * a model that has a template. A template using a Jinja construct LES does
 * not implement is LES_ERR_UNSUPPORTED with the construct named, never
 * rendered approximately; an error the template raises itself (e.g.
 * "Conversation roles must alternate user/assistant/...") is
 * LES_ERR_INVALID_ARGUMENT with its message.
 *
 * Built-in families, by name (les_chat_template_name() lists them): chatml,
 * llama2, llama2-sys, llama3, llama4, mistral-v1, mistral-v3,
 * mistral-v3-tekken, mistral-v7, mistral-v7-tekken, gemma, deepseek,
 * deepseek2, deepseek3, gpt-oss, minicpm, phi3, phi4, zephyr, command-r,
 * kimi-k2, hunyuan-moe; aliases mistral and mixtral (= mistral-v1), qwen
 * (= chatml). They render only roles and text. A model without a template
 * gets chatml and a warning through the model's log callback (once per
 * model).
 *
 * Template names (`tmpl`): NULL, "" or "jinja" = the model's own template; a
 * family name; or NAME of a variant tokenizer.chat_template.NAME of the model.
 *
 * The rendered text holds special-token texts (<|im_start|>, ...): generate
 * from it with les_generate_params.parse_special = true, or tokenize it with
 * les_tokenize(..., parse_special = true). BOS is never part of it: the
 * tokenizer adds BOS at the start of a context, so when a model's template
 * prints bos_token first and its vocabulary adds BOS, that leading text is
 * removed (the tokens are then exactly transformers' apply_chat_template's).
 *
 * Thread-safety: every function declared here is thread-safe (the model is
 * immutable and the functions keep no state).
 */
#ifndef LES_CHAT_H
#define LES_CHAT_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One turn of a conversation; both strings NUL-terminated UTF-8, borrowed for
 * the call. role: "system", "user", "assistant", "tool", ... as the template
 * expects; built-in families that print the role name (chatml, llama3,
 * llama4, gpt-oss, phi3, phi4, zephyr) accept any non-empty role, the others
 * system / user / assistant (kimi-k2 also tool). */
typedef struct les_chat_message {
  const char *role;
  const char *content;
} les_chat_message;

/* Where the template in use comes from. */
typedef enum les_chat_template_source {
  LES_CHAT_TEMPLATE_NAMED = 0,    /* the caller named a built-in family */
  LES_CHAT_TEMPLATE_MODEL = 1,    /* the model's own template (tokenizer.chat_template[.NAME]), rendered as Jinja */
  LES_CHAT_TEMPLATE_FALLBACK = 2  /* the model has no template: chatml */
} les_chat_template_source;

/* Renders `messages` (n_messages entries; NULL allowed when 0) with the
 * template `tmpl` (see "Template names" above; the model is required unless
 * `tmpl` names a family). add_assistant_prefix: end with the text that opens
 * the assistant's turn, so generation answers (a model template's
 * add_generation_prompt). Writes the text NUL-terminated into buf (buf_size
 * bytes) and its length (without the NUL) to *n_out. Errors:
 * LES_ERR_INVALID_ARGUMENT (NULL n_out, a NULL role/content, an empty role,
 * an unknown template name, a role the family cannot express, an error the
 * model's template raises, or buf too small: then *n_out is the length
 * needed and nothing is written; call again with buf_size > *n_out),
 * LES_ERR_UNSUPPORTED (the model's template uses a construct LES does not
 * implement: name a family), LES_ERR_FORMAT (the model's template is not
 * valid Jinja), LES_ERR_OUT_OF_MEMORY (the template exceeded the renderer's
 * limits: 16 MiB of text, 2e7 steps, 100 nested calls). Thread-safe. */
LES_API les_status les_chat_apply_template(const les_model *model, const char *tmpl,
                                           const les_chat_message *messages, size_t n_messages,
                                           bool add_assistant_prefix, char *buf, size_t buf_size, size_t *n_out);

/* Renders a conversation given as a JSON object (UTF-8, NUL-terminated), as
 * transformers' apply_chat_template(messages, tools=..., documents=...,
 * add_generation_prompt=..., **kwargs) does:
 *   {"messages": [...],               required: message objects, passed to the
 *                                     template as they are (role, content,
 *                                     tool_calls, reasoning_content,
 *                                     tool_call_id, name, ...)
 *    "tools": [...],                  optional (default null): tool schemas
 *    "documents": [...],              optional (default null)
 *    "add_generation_prompt": bool,   optional (default true)
 *    "<any other key>": value}        an extra template variable, e.g.
 *                                     "enable_thinking": false
 * A built-in family (named in `tmpl`) renders only each message's role and
 * string content; tools, documents or tool calls are then
 * LES_ERR_INVALID_ARGUMENT. Output, buffer protocol and errors as
 * les_chat_apply_template, plus LES_ERR_INVALID_ARGUMENT for JSON that is
 * not such an object. Thread-safe. */
LES_API les_status les_chat_apply_template_json(const les_model *model, const char *tmpl, const char *request_json,
                                                char *buf, size_t buf_size, size_t *n_out);

/* Which template les_chat_apply_template(model, tmpl, ...) would use: its
 * name (static storage, never free: a family's canonical name, or "jinja"
 * for the model's own template) in *name and where it comes from in *source
 * (either may be NULL). Errors as for les_chat_apply_template's choice of
 * template (unknown name, a model template that does not parse or uses an
 * unsupported statement). Thread-safe. */
LES_API les_status les_chat_template_resolve(const les_model *model, const char *tmpl, const char **name,
                                             les_chat_template_source *source);

/* The number of built-in family names (canonical names, then aliases) and the
 * i-th (static storage; NULL when i is out of range). Thread-safe. */
LES_API int32_t les_chat_template_count(void);
LES_API const char *les_chat_template_name(int32_t i);

#ifdef __cplusplus
}
#endif

#endif /* LES_CHAT_H */
