/*
 * les_chat.h: chat templates. Turns a conversation, a list of (role, content)
 * messages, into the prompt text a chat model was trained on, in the format
 * of the model's template family. Part of the LES C ABI; include <les/les.h>.
 *
 * LES recognises the family from the markers in the GGUF's
 * `tokenizer.chat_template` (it does not run the Jinja source), or takes a
 * family by name. Names (les_chat_template_name() lists them): chatml,
 * llama2, llama2-sys, llama3, llama4, mistral-v1, mistral-v3,
 * mistral-v3-tekken, mistral-v7, mistral-v7-tekken, gemma, deepseek,
 * deepseek2, deepseek3, gpt-oss, minicpm, phi3, phi4, zephyr, command-r,
 * kimi-k2, hunyuan-moe; aliases mistral and mixtral (= mistral-v1), qwen
 * (= chatml). A model without a template gets chatml and a warning through
 * the model's log callback (once per model); a template of no known family is
 * LES_ERR_UNSUPPORTED with a message naming `--chat-template` (the tools'
 * option) and the names.
 *
 * The rendered text holds special-token texts (<|im_start|>, ...): generate
 * from it with les_generate_params.parse_special = true, or tokenize it with
 * les_tokenize(..., parse_special = true). BOS is never part of it (the
 * tokenizer adds BOS at the start of a context).
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
 * the call. role: "system", "user", "assistant", and "tool" where the family
 * has it; families that print the role name (chatml, llama3, llama4, gpt-oss,
 * phi3, phi4, zephyr) accept any non-empty role. */
typedef struct les_chat_message {
  const char *role;
  const char *content;
} les_chat_message;

/* Where the template in use comes from. */
typedef enum les_chat_template_source {
  LES_CHAT_TEMPLATE_NAMED = 0,    /* the caller named a family */
  LES_CHAT_TEMPLATE_MODEL = 1,    /* recognised from the model's tokenizer.chat_template */
  LES_CHAT_TEMPLATE_FALLBACK = 2  /* the model has no template: chatml */
} les_chat_template_source;

/* Renders `messages` (n_messages entries; NULL allowed when 0) with the
 * template `tmpl`: a family name, or NULL / "" for the model's own template
 * (then `model` is required; with a name it may be NULL). add_assistant_prefix:
 * end with the text that opens the assistant's turn, so generation answers.
 * Writes the text NUL-terminated into buf (buf_size bytes) and its length
 * (without the NUL) to *n_out. Errors: LES_ERR_INVALID_ARGUMENT (NULL
 * n_out, a NULL role/content, an unknown template name, a role the family
 * cannot express, or buf too small: then *n_out is the length needed and
 * nothing is written; call again with buf_size > *n_out), LES_ERR_UNSUPPORTED
 * (the model's template is of no known family: name one). Thread-safe. */
LES_API les_status les_chat_apply_template(const les_model *model, const char *tmpl,
                                           const les_chat_message *messages, size_t n_messages,
                                           bool add_assistant_prefix, char *buf, size_t buf_size, size_t *n_out);

/* Which template les_chat_apply_template(model, tmpl, ...) would use: its
 * canonical name (static storage, never free) in *name and where it comes
 * from in *source (either may be NULL). Errors as for les_chat_apply_template.
 * Thread-safe. */
LES_API les_status les_chat_template_resolve(const les_model *model, const char *tmpl, const char **name,
                                             les_chat_template_source *source);

/* The number of template names (canonical names, then aliases) and the i-th
 * (static storage; NULL when i is out of range). Thread-safe. */
LES_API int32_t les_chat_template_count(void);
LES_API const char *les_chat_template_name(int32_t i);

#ifdef __cplusplus
}
#endif

#endif /* LES_CHAT_H */
