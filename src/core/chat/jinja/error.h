// Errors of LES's Jinja engine, as les::Status values whose message starts
// with the name of the Python exception Jinja2 would raise in the same place
// ("TypeError: ...", "UndefinedError: ...", "TemplateError: ..." for the
// template's own raise_exception()), so tests can compare the kind with
// Jinja2's and users read the familiar names.
//
// Status codes: a template that does not parse is a format error; a
// construct LES does not implement is unsupported (the message names it:
// "filter 'xmlattr'"); an exhausted safety limit (output size, steps, depth)
// is out_of_memory; every error raised while rendering (the template's own
// raise_exception, undefined values, type errors) is invalid_argument, since
// it comes from the conversation the template was given.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace les::jinja {

// The parts appended into one string (messages; avoids GCC 12's false
// -Wrestrict on "literal" + std::string temporaries).
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

// Errors while parsing (format).
inline Status syntax_error(const std::string& m, int line) {
  return format_error("TemplateSyntaxError: " + m + " (line " + std::to_string(line) + ")");
}
inline Status assertion_error(const std::string& m, int line) {  // unknown filter/test outside an if
  return format_error("TemplateAssertionError: " + m + " (line " + std::to_string(line) + ")");
}

// Errors while rendering (invalid_argument).
inline Status template_error(const std::string& m) { return invalid_argument_error("TemplateError: " + m); }
inline Status undefined_error(const std::string& m) { return invalid_argument_error("UndefinedError: " + m); }
inline Status type_error(const std::string& m) { return invalid_argument_error("TypeError: " + m); }
inline Status value_error(const std::string& m) { return invalid_argument_error("ValueError: " + m); }
inline Status security_error(const std::string& m) { return invalid_argument_error("SecurityError: " + m); }
inline Status runtime_error(const std::string& m) { return invalid_argument_error("TemplateRuntimeError: " + m); }
inline Status zero_division_error() { return invalid_argument_error("ZeroDivisionError: division by zero"); }

// A construct LES's engine does not implement (never rendered approximately).
inline Status unsupported_construct(const std::string& what) {
  return unsupported_error("Jinja construct not supported by LES: " + what);
}
// A safety limit (RenderLimits) was reached.
inline Status limit_error(const std::string& m) { return out_of_memory_error("Jinja limit: " + m); }

}  // namespace les::jinja
