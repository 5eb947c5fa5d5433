// Python's operators and built-in conversions on template values: arithmetic
// (+ - * / // % ** and unary - +), comparisons, `in`, iteration, len(),
// int()/float() parsing, and Jinja's Undefined rules (using an Undefined in an
// operation raises UndefinedError; the sandbox's raises SecurityError).
//
// Source: CPython 3.11 semantics (int/float/str/list/tuple/dict), Jinja2 3.1
// runtime.Undefined. Integers are 64-bit: a result beyond that is refused
// (unsupported), never wrapped.
//
// Thread-safety: pure functions (iterate() advances a generator's position,
// which belongs to the render).
#pragma once

#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "core/chat/jinja/ast.h"
#include "core/chat/jinja/value.h"
#include "util/status.h"

namespace les::jinja {

// markupsafe.escape: & < > ' " as HTML entities (&amp; &lt; &gt; &#39; &#34;).
std::string html_escape(std::string_view s);

// The error an Undefined raises when used (UndefinedError, or the sandbox's SecurityError).
Status undefined_use(const Value& undefined);

// a op b. `max_len`: the largest string or list the result may be (RenderLimits).
Result<Value> binary_op(BinOp op, const Value& a, const Value& b, size_t max_len);
Result<Value> negate(const Value& v, bool minus);

// a <op> b for ==, !=, <, <=, >, >=, in, not in.
Result<bool> compare(CmpOp op, const Value& a, const Value& b);
// Python's a < b (numbers, strings, lists and tuples item by item); TypeError otherwise.
Result<bool> less(const Value& a, const Value& b);

// The items `for x in v` visits: a list's items (a generator's remaining
// ones, which it then has no more of), a dict's keys, a string's code points;
// nothing for Undefined. TypeError for None, numbers and objects.
Result<std::vector<Value>> iterate(const Value& v);
// len(v): TypeError for values without a length (numbers, None, generators).
Result<int64_t> length(const Value& v);

// int(s, base) / float(s) of a string as Python parses them (spaces and `_`
// separators allowed); nullopt when Python would raise ValueError.
std::optional<int64_t> parse_int(const std::string& s, int base = 10);
std::optional<double> parse_float(const std::string& s);

}  // namespace les::jinja
