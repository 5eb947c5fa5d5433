// Rendering a model's own chat template (its Jinja source) the way Hugging
// Face's `tokenizer.apply_chat_template` does: the same variables
// (`messages`, `tools`, `documents`, `add_generation_prompt`, the special
// tokens, extra keyword arguments such as `enable_thinking`) in the same
// Jinja environment (jinja/template.h).
//
// Messages are JSON objects as transformers takes them: {"role", "content"}
// plus whatever the template reads ("tool_calls": [{"type": "function",
// "function": {"name", "arguments"}}], "reasoning_content", "tool_call_id",
// "name", ...). They are passed through unchanged.
//
// Thread-safety: pure functions over immutable inputs.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/chat/jinja/template.h"
#include "util/status.h"

namespace les::chat {

// The arguments of apply_chat_template.
struct JinjaChat {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // list of message objects
  nlohmann::ordered_json tools;                                        // null, or a list of tool schemas
  nlohmann::ordered_json documents;                                    // null, or a list of documents
  bool add_generation_prompt = true;
  // The tokenizer's special tokens as text; absent ones are not defined in the template.
  std::optional<std::string> bos_token, eos_token;
  // Extra template variables (an object, e.g. {"enable_thinking": false}); they
  // override the ones above, as **kwargs do in transformers.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

// Renders `chat` with `tmpl`. Errors: invalid_argument for messages that are
// not a list of objects or extra that is not an object, and those of
// jinja::Template::render (the template's raise_exception, an undefined
// value, ... as invalid_argument; an unsupported construct as unsupported).
Result<std::string> render_jinja_chat(const jinja::Template& tmpl, const JinjaChat& chat,
                                      const jinja::RenderOptions& options = {});

}  // namespace les::chat
