// Jinja2's filters on single values, the filter table and the evaluator's
// filter dispatch (filters.h). Source: jinja2/filters.py 3.1 and transformers'
// tojson override.
#include "core/chat/jinja/filters.h"

#include <cmath>
#include <cstdio>

#include "core/chat/jinja/callables.h"
#include "core/chat/jinja/error.h"
#include "core/chat/jinja/format.h"
#include "core/chat/jinja/methods.h"
#include "core/chat/jinja/ops.h"
#include "core/chat/jinja/parser.h"
#include "core/chat/jinja/pystr.h"

namespace les::jinja {
namespace {

// Jinja's soft_str: str(value) (Undefined prints as "").
Result<std::string> text_of(const Value& v) { return to_str(v); }

#define LES_JINJA_BIND(binder, fn, ...)          \
  ArgBinder binder(fn, args, {__VA_ARGS__});     \
  LES_RETURN_IF_ERROR(binder.status())

Result<Value> f_string_case(const Value& input, std::string (*fn)(std::string_view)) {
  LES_ASSIGN_OR_RETURN(std::string s, text_of(input));
  return Value(fn(s));
}

Result<Value> f_upper(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "upper", );
  return f_string_case(in, py::upper);
}
Result<Value> f_lower(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "lower", );
  return f_string_case(in, py::lower);
}
Result<Value> f_capitalize(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "capitalize", );
  return f_string_case(in, py::capitalize);
}

// Jinja's do_title: each chunk after a run of [-\s({[<] gets its first
// character upper-cased and the rest lower-cased.
Result<Value> f_title(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "title", );
  LES_ASSIGN_OR_RETURN(std::string s, text_of(in));
  const std::u32string cps = py::decode(s);
  auto is_sep = [](char32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py::is_space(c);
  };
  std::u32string out;
  bool start = true;
  for (char32_t c : cps) {
    if (is_sep(c)) {
      out.push_back(c);
      start = true;
    } else {
      out.push_back(start ? py::to_upper(c) : py::to_lower(c));
      start = false;
    }
  }
  return Value(py::encode(out));
}

Result<Value> f_trim(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "trim", "chars");
  LES_ASSIGN_OR_RETURN(std::string s, text_of(in));
  std::optional<std::string> chars;
  if (b.get(0) != nullptr && !b.get(0)->is_none()) {
    if (!b.get(0)->is_string()) return type_error("strip arg must be None or str");
    chars = b.get(0)->str();
  }
  return Value(py::strip(s, chars));
}

Result<Value> f_string(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "string", );
  if (in.is_markup()) return in;  // soft_str keeps a Markup
  LES_ASSIGN_OR_RETURN(std::string s, text_of(in));
  return Value(std::move(s));
}

Result<Value> f_safe(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "safe", );
  LES_ASSIGN_OR_RETURN(std::string s, text_of(in));  // Markup(value) is str(value)
  return Value::markup(std::move(s));
}

Result<Value> f_replace(Evaluator& ev, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "replace", "old", "new", "count");
  if (b.get(0) == nullptr || b.get(1) == nullptr) return type_error("replace() missing required arguments");
  LES_ASSIGN_OR_RETURN(std::string s, text_of(in));
  LES_ASSIGN_OR_RETURN(std::string old, text_of(*b.get(0)));
  LES_ASSIGN_OR_RETURN(std::string repl, text_of(*b.get(1)));
  int64_t count = -1;
  if (b.get(2) != nullptr && !b.get(2)->is_none()) {
    if (!b.get(2)->is_integral()) return type_error("replace() count must be an integer");
    count = b.get(2)->as_int();
  }
  std::string out = py::replace(s, old, repl, count);
  LES_RETURN_IF_ERROR(ev.check_size(out.size()));
  return Value(std::move(out));
}

Result<Value> f_length(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "length", );
  LES_ASSIGN_OR_RETURN(int64_t n, length(in));
  return Value(n);
}

Result<Value> f_default(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "default", "default_value", "boolean");
  const bool boolean = b.get(1) != nullptr && b.get(1)->truthy();
  if (in.is_undefined() || (boolean && !in.truthy())) return b.get_or(0, Value(std::string()));
  return in;
}

Result<Value> f_abs(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "abs", );
  if (in.is_undefined()) return undefined_use(in);
  if (in.is_integral()) {
    if (in.as_int() == INT64_MIN) return unsupported_construct("integer arithmetic beyond 64 bits");
    return Value(in.as_int() < 0 ? -in.as_int() : in.as_int());
  }
  if (in.is_float()) return Value(std::fabs(in.as_double()));
  return type_error("bad operand type for abs(): '" + type_name(in) + "'");
}

Result<Value> f_int(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "int", "default", "base");
  const Value dflt = b.get_or(0, Value(int64_t{0}));
  int base = 10;
  if (b.get(1) != nullptr) {
    if (!b.get(1)->is_integral()) return type_error("int() base must be an integer");
    base = static_cast<int>(b.get(1)->as_int());
  }
  if (in.is_undefined()) return undefined_use(in);
  if (in.is_integral()) return Value(in.as_int());
  if (in.is_float()) {
    const double f = in.as_double();
    if (std::isnan(f)) return dflt;
    if (std::isinf(f) || std::fabs(f) >= 9.2e18) return unsupported_construct("int() of a float beyond 64 bits");
    return Value(static_cast<int64_t>(f));
  }
  if (in.is_string()) {
    if (auto v = parse_int(in.str(), base)) return Value(*v);
    if (auto f = parse_float(in.str())) {
      if (std::isnan(*f)) return dflt;
      if (std::isinf(*f) || std::fabs(*f) >= 9.2e18) return unsupported_construct("int() beyond 64 bits");
      return Value(static_cast<int64_t>(*f));
    }
  }
  return dflt;
}

Result<Value> f_float(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "float", "default");
  const Value dflt = b.get_or(0, Value(0.0));
  if (in.is_undefined()) return undefined_use(in);
  if (in.is_number()) return Value(in.as_double());
  if (in.is_string())
    if (auto f = parse_float(in.str())) return Value(*f);
  return dflt;
}

Result<Value> f_round(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "round", "precision", "method");
  int64_t precision = 0;
  if (b.get(0) != nullptr) {
    if (!b.get(0)->is_integral()) return type_error("round() precision must be an integer");
    precision = b.get(0)->as_int();
  }
  const std::string method = b.get(1) != nullptr && b.get(1)->is_string() ? b.get(1)->str() : "common";
  if (method != "common" && method != "ceil" && method != "floor")
    return invalid_argument_error("FilterArgumentError: method must be common, ceil or floor");
  if (in.is_undefined()) return undefined_use(in);
  if (!in.is_number()) return type_error("type " + type_name(in) + " doesn't define __round__ method");
  if (precision < -300 || precision > 300) return unsupported_construct("round() precision beyond 300 digits");
  if (method == "common") {
    if (in.is_integral()) {
      if (precision >= 0) return Value(in.as_int());
      return unsupported_construct("round() of an integer to negative digits");
    }
    const double x = in.as_double();
    if (!std::isfinite(x)) return Value(x);
    if (precision >= 0) {  // printf's %.Nf rounds the exact binary value half-even, as Python's round does
      char buf[512];
      std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(precision), x);
      return Value(std::strtod(buf, nullptr));
    }
    const double scale = std::pow(10.0, static_cast<double>(-precision));
    return Value(std::nearbyint(x / scale) * scale);
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = in.as_double() * scale;
  return Value((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
}

Result<Value> f_wordcount(Evaluator&, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "wordcount", );
  LES_ASSIGN_OR_RETURN(std::string s, text_of(in));
  int64_t words = 0;
  bool in_word = false;
  for (char32_t c : py::decode(s)) {
    const bool w = py::is_word(c);
    if (w && !in_word) ++words;
    in_word = w;
  }
  return Value(words);
}

Result<Value> f_center(Evaluator& ev, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "center", "width");
  LES_ASSIGN_OR_RETURN(std::string s, text_of(in));
  CallArgs call;
  call.pos.push_back(b.get_or(0, Value(int64_t{80})));
  return call_method(ev, Value(std::move(s)), "center", call);
}

// Jinja's do_indent (3.1): lines after the first get `width` spaces (or the
// string); blank lines only when `blank`; the first line when `first`.
Result<Value> f_indent(Evaluator& ev, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "indent", "width", "first", "blank");
  std::string indention(4, ' ');
  if (const Value* w = b.get(0)) {
    if (w->is_string()) {
      indention = w->str();
    } else if (w->is_integral()) {
      LES_RETURN_IF_ERROR(ev.check_size(static_cast<size_t>(std::max<int64_t>(0, w->as_int()))));
      indention.assign(static_cast<size_t>(std::max<int64_t>(0, w->as_int())), ' ');
    } else {
      return type_error("can't multiply sequence by non-int of type '" + type_name(*w) + "'");
    }
  }
  const bool first = b.get(1) != nullptr && b.get(1)->truthy();
  const bool blank = b.get(2) != nullptr && b.get(2)->truthy();
  LES_ASSIGN_OR_RETURN(std::string s, text_of(in));
  s += "\n";  // Jinja's quirk, so splitlines keeps a trailing empty line
  const std::vector<std::string> lines = py::splitlines(s);
  std::string rv;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) rv += "\n";
    if (i > 0 && (blank || !lines[i].empty())) rv += indention;
    rv += lines[i];
    LES_RETURN_IF_ERROR(ev.check_size(rv.size()));
  }
  if (first) rv = indention + rv;
  return Value(std::move(rv));
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Result<Value> f_tojson(Evaluator& ev, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "tojson", "ensure_ascii", "indent", "separators", "sort_keys");
  JsonOptions opt;
  opt.ensure_ascii = b.get(0) != nullptr && b.get(0)->truthy();
  if (const Value* ind = b.get(1); ind != nullptr && !ind->is_none()) {
    if (ind->is_string()) {
      opt.indent = ind->str();
    } else if (ind->is_integral()) {
      LES_RETURN_IF_ERROR(ev.check_size(static_cast<size_t>(std::max<int64_t>(0, ind->as_int()))));
      opt.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, ind->as_int())), ' ');
    } else {
      return type_error("tojson indent must be an int or a str");
    }
  }
  if (const Value* sep = b.get(2); sep != nullptr && !sep->is_none()) {
    if (!sep->is_list() || sep->list().items.size() != 2 || !sep->list().items[0].is_string() ||
        !sep->list().items[1].is_string())
      return type_error("tojson separators must be a pair of strings");
    opt.item_separator = sep->list().items[0].str();
    opt.key_separator = sep->list().items[1].str();
  }
  opt.sort_keys = b.get(3) != nullptr && b.get(3)->truthy();
  LES_ASSIGN_OR_RETURN(std::string json, to_json(in, opt));
  LES_RETURN_IF_ERROR(ev.check_size(json.size()));
  return Value(std::move(json));
}

Result<Value> f_attr(Evaluator& ev, const Value& in, const CallArgs& args) {
  LES_JINJA_BIND(b, "attr", "name");
  if (b.get(0) == nullptr) return type_error("attr() missing 1 required positional argument: 'name'");
  LES_ASSIGN_OR_RETURN(std::string name, text_of(*b.get(0)));
  // Python attributes only (methods, an object's attributes), never dict items.
  if (in.is_object()) return in.object().getattr(name);
  if (in.is_undefined()) return undefined_use(in);
  if (method_kind(in, name) == MethodKind::none)
    return Value::undefined(cat("'", type_name(in), " object' has no attribute '", name, "'"));
  return ev.getattr(in, name);
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"abs", f_abs},
    {"attr", f_attr},
    {"capitalize", f_capitalize},
    {"center", f_center},
    {"count", f_length},
    {"d", f_default},
    {"default", f_default},
    {"dictsort", filter_dictsort},
    {"first", filter_first},
    {"float", f_float},
    {"indent", f_indent},
    {"int", f_int},
    {"items", filter_items},
    {"join", filter_join},
    {"last", filter_last},
    {"length", f_length},
    {"list", filter_list},
    {"lower", f_lower},
    {"map", filter_map},
    {"max", filter_max},
    {"min", filter_min},
    {"reject", filter_reject},
    {"rejectattr", filter_rejectattr},
    {"replace", f_replace},
    {"reverse", filter_reverse},
    {"round", f_round},
    {"safe", f_safe},
    {"select", filter_select},
    {"selectattr", filter_selectattr},
    {"sort", filter_sort},
    {"string", f_string},
    {"sum", filter_sum},
    {"title", f_title},
    {"tojson", f_tojson},
    {"trim", f_trim},
    {"unique", filter_unique},
    {"upper", f_upper},
    {"wordcount", f_wordcount},
};

}  // namespace

FilterFn find_filter(std::string_view name) {
  for (const FilterEntry& f : kFilters)
    if (f.name == name) return f.fn;
  return nullptr;
}

Result<Value> Evaluator::filter(std::string_view name, const Value& input, const CallArgs& args, bool) {
  LES_RETURN_IF_ERROR(step());
  // Filters whose result from a Markup would be a Markup (trim, upper, replace, ...) are refused on one.
  if (input.is_markup() && name != "safe" && name != "string" && name != "length" && name != "count" &&
      name != "default" && name != "d" && name != "tojson" && name != "list" && name != "join" &&
      name != "wordcount" && name != "int" && name != "float" && name != "first" && name != "last")
    return unsupported_construct("filter '" + std::string(name) + "' on a Markup (|safe) string");
  if (FilterFn fn = find_filter(name)) return fn(*this, input, args);
  if (is_jinja_filter(name)) return unsupported_construct("filter '" + std::string(name) + "'");
  return runtime_error("No filter named '" + std::string(name) + "' found.");
}

}  // namespace les::jinja
