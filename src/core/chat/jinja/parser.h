// The Jinja parser: tokens -> statement tree, following Jinja2 3.1's grammar
// (jinja2/parser.py): operator precedence, tests and filters binding to the
// unary expression before them, chained comparisons, conditional
// expressions, tuples, subscripts and slices, calls with keyword, *args and
// **kwargs arguments, and the statements if/elif/else, for (with else, an
// `if` filter, recursive), set (also block set and namespace attributes),
// macro, call, filter, with, break/continue (transformers enables
// loopcontrols) and transformers' generation block.
//
// Errors (format): a syntax error names what was expected and the line; an
// unknown filter or test outside an `if` is Jinja2's compile-time
// TemplateAssertionError. Statements LES does not implement (extends, block,
// include, import, from, autoescape) are unsupported, named. Nesting deeper
// than kMaxParseDepth is an error rather than a deep recursion.
//
// Thread-safety: pure function.
#pragma once

#include <vector>

#include "core/chat/jinja/ast.h"
#include "core/chat/jinja/lexer.h"
#include "util/status.h"

namespace les::jinja {

inline constexpr int kMaxParseDepth = 200;

Result<Body> parse(const std::vector<Token>& tokens);

// Whether `name` is one of Jinja2's built-in filters (plus transformers'
// tojson override) / tests. Names outside these lists are errors, as in Jinja2.
bool is_jinja_filter(std::string_view name);
bool is_jinja_test(std::string_view name);

}  // namespace les::jinja
