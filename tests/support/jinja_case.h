// Shared by the chat-template tests and the jinja_render helper: one case of
// conversations.json rendered with LES, and its result in the form of
// render_reference.py's expectations ({"output"} or {"error", "message"}).
#pragma once

#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

#include "core/chat/chat_jinja.h"
#include "core/chat/jinja/template.h"
#include "util/status.h"

namespace les::test {

// "YYYY-MM-DDTHH:MM:SS" as a complete std::tm (weekday and day of the year filled in).
std::tm parse_now(const std::string& iso);

// A failed render as {"error": KIND, "message": TEXT}: KIND is the Jinja2
// exception name at the start of the message ("TypeError: ..."), or
// "unsupported" / "limit" for LES's refusals.
nlohmann::ordered_json result_json(const Status& status);

// Renders one case at the clock `now`: for a chat, apply_chat_template's
// arguments (keys other than name, messages, tools, documents,
// add_generation_prompt, bos_token, eos_token are extra variables);
// otherwise exactly the case's variables (except name).
nlohmann::ordered_json render_case(const jinja::Template& tmpl, const nlohmann::ordered_json& c, const std::tm& now,
                                   bool chat);

// Whether LES's result matches Jinja2's (render_reference.py's rule): the
// same text, or an error where Jinja2 raised one; a TemplateError (the
// template's own raise_exception) must carry the same message.
bool matches_reference(const nlohmann::ordered_json& reference, const nlohmann::ordered_json& les);

// The JSON document in a file under tests/ (LES_TESTS_SOURCE_DIR); fails the test when unreadable.
nlohmann::ordered_json load_test_json(const std::string& relative);

}  // namespace les::test
