// LES's Jinja engine, the front door: parse a template once, render it many
// times. It runs the subset of Jinja2 that chat templates use, with the
// semantics of Jinja2 3.1 in the environment transformers' apply_chat_template
// builds (ImmutableSandboxedEnvironment, trim_blocks and lstrip_blocks, the
// loopcontrols extension, its tojson filter and its raise_exception and
// strftime_now globals), so a template renders byte for byte as it does in
// Python. What LES does not implement is refused with the construct named
// (StatusCode::unsupported), never approximated.
//
// Why LES has its own engine: no maintained C++ Jinja library is packaged for
// Debian 12, and chat templates need only Jinja's expression language and a
// dozen statements (llama.cpp wrote its own for the same reason).
//
//   auto t = jinja::Template::parse(source);            // format / unsupported errors
//   auto text = t->render({{"messages", msgs}, ...});   // invalid_argument: the template raised
//
// Thread-safety: a Template is immutable; render() may run on many threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/chat/jinja/ast.h"
#include "core/chat/jinja/eval.h"
#include "core/chat/jinja/lexer.h"
#include "core/chat/jinja/value.h"
#include "util/status.h"

namespace les::jinja {

using Variables = std::vector<std::pair<std::string, Value>>;

class Template {
 public:
  // Errors: format ("TemplateSyntaxError: ...", "TemplateAssertionError: ..."
  // for an unknown filter or test), unsupported (extends, include, ...).
  static Result<Template> parse(std::string_view source, const LexOptions& options = {});

  // Renders with the given variables. Errors: invalid_argument with the
  // Jinja2 exception's name and message ("TemplateError: <the template's
  // raise_exception text>", "UndefinedError: ...", "TypeError: ..."),
  // unsupported (a construct LES does not implement, named), out_of_memory
  // (a RenderLimits bound). Each message ends with the template line.
  Result<std::string> render(const Variables& variables, const RenderOptions& options = {}) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace les::jinja
