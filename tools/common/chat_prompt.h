// Chat prompts for `les run --chat` and `les chat`: the template choice
// (--chat-template NAME or the model's own, chatml with a warning when the
// model has none) and rendering a conversation through les_chat.h, with
// extra template variables (--chat-template-kwargs '{"enable_thinking": false}').
//
// Thread-safety: single-threaded (the tool's main thread), except
// render_chat_text().
#pragma once

#include <les/les.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace les::tool {

struct ChatTurn {
  std::string role, content;
};

// Resolves the template and prints which one is used ("les TOOL: chat
// template NAME (from ...)"). Returns 0, or 2 for an unknown name, 1 for a
// model template LES cannot apply (the message names --chat-template).
int resolve_chat_template(const char* tool, const les_model* model, const std::string& name);

// Adds --chat-template NAME and --chat-template-kwargs JSON to `cmd` (les run
// --chat, les chat), stored into `name` and `kwargs_json`; checked later by
// resolve_chat_template() and check_template_kwargs(). Not thread-safe (CLI
// setup).
void add_chat_template_options(CLI::App* cmd, std::string& name, std::string& kwargs_json);

// Whether `kwargs_json` is empty or a JSON object without the keys the
// conversation itself sets (messages, add_generation_prompt); otherwise
// prints why ("les TOOL: --chat-template-kwargs ...") and returns false.
bool check_template_kwargs(const char* tool, const std::string& kwargs_json);

// Renders `turns` (add_assistant_prefix: open the assistant's answer) into
// *out without printing: LES_OK, or les_chat_apply_template_json's status
// (LES_ERR_INVALID_ARGUMENT: an unknown name, a role the family cannot
// express, a role or content holding a NUL byte, an error the model's
// template raises; LES_ERR_UNSUPPORTED: a construct LES's Jinja engine does
// not implement) with its message in *error. kwargs_json: extra template
// variables (a JSON object; "" = none). Thread-safe (les_chat.h).
les_status render_chat_text(const les_model* model, const std::string& name, const std::vector<ChatTurn>& turns,
                            bool add_assistant_prefix, std::string* out, std::string* error,
                            const std::string& kwargs_json = "");

// render_chat_text() for the terminal tools. Returns 0, or 1/2 after printing
// the error as above.
int render_chat(const char* tool, const les_model* model, const std::string& name, const std::vector<ChatTurn>& turns,
                bool add_assistant_prefix, std::string* out, const std::string& kwargs_json = "");

}  // namespace les::tool
