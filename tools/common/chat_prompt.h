// Chat prompts for `les run --chat` and `les chat`: the template choice
// (--chat-template NAME or the model's own, chatml with a warning when the
// model has none) and rendering a conversation through les_chat.h.
//
// Thread-safety: single-threaded (the tool's main thread), except
// render_chat_text().
#pragma once

#include <les/les.h>

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

// Renders `turns` (add_assistant_prefix: open the assistant's answer) into
// *out without printing: LES_OK, or les_chat_apply_template's status
// (LES_ERR_INVALID_ARGUMENT: an unknown name, a role the family cannot
// express, a role or content holding a NUL byte, which a C string would cut
// short; LES_ERR_UNSUPPORTED: a model template of no known family) with its
// message in *error. Thread-safe (les_chat.h).
les_status render_chat_text(const les_model* model, const std::string& name, const std::vector<ChatTurn>& turns,
                            bool add_assistant_prefix, std::string* out, std::string* error);

// render_chat_text() for the terminal tools. Returns 0, or 1/2 after printing
// the error as above.
int render_chat(const char* tool, const les_model* model, const std::string& name, const std::vector<ChatTurn>& turns,
                bool add_assistant_prefix, std::string* out);

}  // namespace les::tool
