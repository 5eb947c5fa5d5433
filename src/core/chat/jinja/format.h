// Values as text: Python's str() (what {{ x }} prints), repr() (how
// containers print their items), float repr, and json.dumps (what the tojson
// filter writes, with the options transformers' tojson passes through).
//
// Source: CPython 3.11 (float_repr_style 'short', Lib/json/encoder.py).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/chat/jinja/value.h"
#include "util/status.h"

namespace les::jinja {

// repr(float): the shortest digits that round-trip, in fixed notation for
// exponents -4..15 ("0.0001", "1e+16", "1.0", "-0.0", "inf", "nan").
std::string format_float(double f);

// str(v): "" for Undefined, "None", "True", the string itself, repr() for
// containers. Objects without a stable text (functions) are unsupported.
Result<std::string> to_str(const Value& v);
// repr(v): strings quoted, "Undefined" for an Undefined.
Result<std::string> to_repr(const Value& v);

// json.dumps options. indent: absent = one line with ", " and ": "; present
// = that text per level (an int n means n spaces) with "," and ": ".
struct JsonOptions {
  std::optional<std::string> indent;
  std::optional<std::string> item_separator, key_separator;  // json.dumps(separators=(item, key))
  bool sort_keys = false;
  bool ensure_ascii = false;  // transformers' tojson default (Jinja's own would be true)
};

// json.dumps(v): None/bools/numbers/strings/lists/tuples/dicts; anything else
// (Undefined, generators, objects) is the TypeError Python raises. Non-string
// dict keys become strings as in Python (1 -> "1", True -> "true").
Result<std::string> to_json(const Value& v, const JsonOptions& options);

// A JSON document as template values (json.loads): objects keep their key
// order, integers stay int, other numbers float. Errors: nesting deeper than
// 512 (out_of_memory), an unsigned integer beyond int64 (unsupported).
Result<Value> from_json(const nlohmann::ordered_json& j);

}  // namespace les::jinja
