// Python str / dict / list methods (methods.h).
#include "core/chat/jinja/methods.h"

#include <algorithm>
#include <array>

#include "core/chat/jinja/error.h"
#include "core/chat/jinja/eval.h"
#include "core/chat/jinja/format.h"
#include "core/chat/jinja/ops.h"
#include "core/chat/jinja/pystr.h"

namespace les::jinja {
namespace {

template <size_t N>
bool among(std::string_view name, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

constexpr std::array<std::string_view, 47> kStrMethods = {
    "capitalize", "casefold",   "center",    "count",       "encode",       "endswith",   "expandtabs",
    "find",       "format",     "format_map", "index",      "isalnum",      "isalpha",    "isascii",
    "isdecimal",  "isdigit",    "isidentifier", "islower",  "isnumeric",    "isprintable", "isspace",
    "istitle",    "isupper",    "join",      "ljust",       "lower",        "lstrip",     "maketrans",
    "partition",  "removeprefix", "removesuffix", "replace", "rfind",       "rindex",     "rjust",
    "rpartition", "rsplit",     "rstrip",    "split",       "splitlines",   "startswith", "strip",
    "swapcase",   "title",      "translate", "upper",       "zfill"};
constexpr std::array<std::string_view, 6> kDictSafe = {"get", "items", "keys", "values", "copy", "fromkeys"};
constexpr std::array<std::string_view, 5> kDictMutating = {"clear", "pop", "popitem", "setdefault", "update"};
// Jinja2 >= 3.1.3 blocks all eight (3.1.2, Debian 12's, still let pop and clear through).
constexpr std::array<std::string_view, 8> kListMutating = {"append", "clear", "extend", "insert",
                                                           "pop",    "remove", "reverse", "sort"};

Result<std::optional<std::string>> opt_str(const Value* v, const char* what) {
  if (v == nullptr || v->is_none()) return std::optional<std::string>();
  if (!v->is_string()) return type_error(std::string(what) + " arg must be None or str");
  return std::optional<std::string>(v->str());
}

Result<int64_t> int_or(const Value* v, int64_t dflt) {
  if (v == nullptr || v->is_none()) return dflt;
  if (!v->is_integral()) return type_error(cat("'", type_name(*v), "' object cannot be interpreted as an integer"));
  return v->as_int();
}

Value str_list(std::vector<std::string> parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (auto& p : parts) items.emplace_back(std::move(p));
  return Value::list(std::move(items));
}

// The code points of s[start:end] (Python's optional start / end arguments).
std::u32string window(const std::u32string& cps, const Value* start, const Value* end, int64_t* offset) {
  const auto n = static_cast<int64_t>(cps.size());
  auto clamp = [&](const Value* v, int64_t dflt) {
    if (v == nullptr || v->is_none() || !v->is_integral()) return dflt;
    int64_t x = v->as_int();
    if (x < 0) x = std::max<int64_t>(0, x + n);
    return std::min(x, n);
  };
  const int64_t b = clamp(start, 0), e = clamp(end, n);
  *offset = b;
  if (e <= b) return std::u32string();
  return cps.substr(static_cast<size_t>(b), static_cast<size_t>(e - b));
}

Result<Value> str_affix(const std::string& s, const CallArgs& args, bool prefix) {
  ArgBinder b(prefix ? "startswith" : "endswith", args, {"affix", "start", "end"});
  LES_RETURN_IF_ERROR(b.status());
  if (b.get(0) == nullptr) return type_error("startswith/endswith takes at least 1 argument");
  std::vector<Value> options;
  if (b.get(0)->is_list() && b.get(0)->seq() == SeqKind::tuple) options = b.get(0)->list().items;
  else options.push_back(*b.get(0));
  int64_t off = 0;
  const std::string text =
      (b.get(1) || b.get(2)) ? py::encode(window(py::decode(s), b.get(1), b.get(2), &off)) : s;
  for (const Value& o : options) {
    if (!o.is_string()) return type_error("startswith/endswith first arg must be str or a tuple of str");
    const std::string& a = o.str();
    if (a.size() > text.size()) continue;
    if (prefix ? text.compare(0, a.size(), a) == 0 : text.compare(text.size() - a.size(), a.size(), a) == 0)
      return Value(true);
  }
  return Value(false);
}

Result<Value> str_find(const std::string& s, std::string_view name, const CallArgs& args) {
  ArgBinder b(name, args, {"sub", "start", "end"});
  LES_RETURN_IF_ERROR(b.status());
  if (b.get(0) == nullptr || !b.get(0)->is_string()) return type_error(std::string(name) + "() argument must be str");
  int64_t off = 0;
  const std::u32string hay = window(py::decode(s), b.get(1), b.get(2), &off);
  const std::u32string needle = py::decode(b.get(0)->str());
  if (name == "count") {
    if (needle.empty()) return Value(static_cast<int64_t>(hay.size() + 1));
    int64_t n = 0;
    for (size_t at = hay.find(needle); at != std::u32string::npos; at = hay.find(needle, at + needle.size())) ++n;
    return Value(n);
  }
  const bool reverse = name == "rfind" || name == "rindex";
  const size_t at = reverse ? hay.rfind(needle) : hay.find(needle);
  if (at == std::u32string::npos) {
    if (name == "index" || name == "rindex") return value_error("substring not found");
    return Value(int64_t{-1});
  }
  return Value(static_cast<int64_t>(at) + off);
}

Result<Value> str_pad(const std::string& s, std::string_view name, const CallArgs& args, size_t max_len) {
  ArgBinder b(name, args, {"width", "fillchar"});
  LES_RETURN_IF_ERROR(b.status());
  LES_ASSIGN_OR_RETURN(int64_t width, int_or(b.get(0), -1));
  if (b.get(0) == nullptr) return type_error(std::string(name) + "() takes at least 1 argument");
  std::u32string fill = U" ";
  if (b.get(1) != nullptr) {
    if (!b.get(1)->is_string() || py::length(b.get(1)->str()) != 1)
      return type_error("The fill character must be exactly one character long");
    fill = py::decode(b.get(1)->str());
  }
  std::u32string cps = py::decode(s);
  const auto n = static_cast<int64_t>(cps.size());
  if (width <= n) return Value(s);
  if (static_cast<uint64_t>(width) > max_len) return limit_error("a padded string beyond the size limit");
  const auto pad = static_cast<size_t>(width - n);
  size_t left = 0;
  if (name == "rjust") left = pad;
  else if (name == "center") left = pad / 2 + (pad & static_cast<size_t>(width) & 1);  // CPython's split
  else if (name == "zfill") {
    const bool sign = !cps.empty() && (cps[0] == '+' || cps[0] == '-');
    std::u32string out = sign ? cps.substr(0, 1) : std::u32string();
    out += std::u32string(pad, U'0');
    out += sign ? cps.substr(1) : cps;
    return Value(py::encode(out));
  }
  std::u32string out(left, fill[0]);
  out += cps;
  out += std::u32string(pad - left, fill[0]);
  return Value(py::encode(out));
}

Result<Value> str_method(Evaluator& ev, const std::string& s, std::string_view name, const CallArgs& args) {
  const size_t max_len = ev.options().limits.max_output_bytes;
  auto no_args = [&]() -> Status {
    if (!args.pos.empty() || !args.kw.empty()) return type_error(std::string(name) + "() takes no arguments");
    return Status();
  };
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    ArgBinder b(name, args, {"chars"});
    LES_RETURN_IF_ERROR(b.status());
    LES_ASSIGN_OR_RETURN(auto chars, opt_str(b.get(0), name.data()));
    const auto side = name == "strip" ? py::StripSide::both : name == "lstrip" ? py::StripSide::left
                                                                              : py::StripSide::right;
    return Value(py::strip(s, chars, side));
  }
  if (name == "split" || name == "rsplit") {
    ArgBinder b(name, args, {"sep", "maxsplit"});
    LES_RETURN_IF_ERROR(b.status());
    LES_ASSIGN_OR_RETURN(auto sep, opt_str(b.get(0), "sep"));
    LES_ASSIGN_OR_RETURN(int64_t maxsplit, int_or(b.get(1), -1));
    if (sep && sep->empty()) return value_error("empty separator");
    return str_list(name == "split" ? py::split(s, sep, maxsplit) : py::rsplit(s, sep, maxsplit));
  }
  if (name == "splitlines") {
    ArgBinder b(name, args, {"keepends"});
    LES_RETURN_IF_ERROR(b.status());
    if (b.get(0) != nullptr && b.get(0)->truthy()) return unsupported_construct("str.splitlines(keepends=True)");
    return str_list(py::splitlines(s));
  }
  if (name == "startswith" || name == "endswith") return str_affix(s, args, name == "startswith");
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count")
    return str_find(s, name, args);
  if (name == "replace") {
    ArgBinder b(name, args, {"old", "new", "count"});
    LES_RETURN_IF_ERROR(b.status());
    if (b.get(0) == nullptr || b.get(1) == nullptr || !b.get(0)->is_string() || !b.get(1)->is_string())
      return type_error("replace() arguments must be str");
    LES_ASSIGN_OR_RETURN(int64_t count, int_or(b.get(2), -1));
    std::string out = py::replace(s, b.get(0)->str(), b.get(1)->str(), count);
    LES_RETURN_IF_ERROR(ev.check_size(out.size()));
    return Value(std::move(out));
  }
  if (name == "join") {
    ArgBinder b(name, args, {"iterable"});
    LES_RETURN_IF_ERROR(b.status());
    if (b.get(0) == nullptr) return type_error("join() takes exactly one argument");
    LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(*b.get(0)));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string())
        return type_error("sequence item " + std::to_string(i) + ": expected str instance, " +
                          type_name(items[i]) + " found");
      if (i > 0) out += s;
      out += items[i].str();
      LES_RETURN_IF_ERROR(ev.check_size(out.size()));
    }
    return Value(std::move(out));
  }
  if (name == "center" || name == "ljust" || name == "rjust" || name == "zfill") return str_pad(s, name, args, max_len);
  if (name == "partition" || name == "rpartition") {
    if (args.pos.size() != 1 || !args.pos[0].is_string() || !args.kw.empty())
      return type_error(std::string(name) + "() takes exactly one str argument");
    const std::string& sep = args.pos[0].str();
    if (sep.empty()) return value_error("empty separator");
    const size_t at = name == "partition" ? s.find(sep) : s.rfind(sep);
    std::vector<Value> parts;
    if (at == std::string::npos) {
      parts = name == "partition" ? std::vector<Value>{Value(s), Value(""), Value("")}
                                  : std::vector<Value>{Value(""), Value(""), Value(s)};
    } else {
      parts = {Value(s.substr(0, at)), Value(sep), Value(s.substr(at + sep.size()))};
    }
    return Value::list(std::move(parts), SeqKind::tuple);
  }
  if (name == "removeprefix" || name == "removesuffix") {
    if (args.pos.size() != 1 || !args.pos[0].is_string() || !args.kw.empty())
      return type_error(std::string(name) + "() takes exactly one str argument");
    const std::string& a = args.pos[0].str();
    if (name == "removeprefix") return Value(s.compare(0, a.size(), a) == 0 ? s.substr(a.size()) : s);
    if (a.size() <= s.size() && s.compare(s.size() - a.size(), a.size(), a) == 0)
      return Value(s.substr(0, s.size() - a.size()));
    return Value(s);
  }
  LES_RETURN_IF_ERROR(no_args());
  if (name == "upper") return Value(py::upper(s));
  if (name == "lower" || name == "casefold") return Value(py::lower(s));
  if (name == "title") return Value(py::title(s));
  if (name == "capitalize") return Value(py::capitalize(s));
  if (name == "swapcase") return Value(py::swapcase(s));
  if (name == "isupper") return Value(py::isupper(s));
  if (name == "islower") return Value(py::islower(s));
  bool (*pred)(char32_t) = nullptr;
  if (name == "isalpha") pred = py::is_alpha;
  else if (name == "isdigit" || name == "isnumeric") pred = py::is_digit;
  else if (name == "isdecimal") pred = py::is_decimal;
  else if (name == "isalnum") pred = py::is_alnum;
  else if (name == "isspace") pred = py::is_space;
  else if (name == "isascii") return Value(std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; }));
  if (pred != nullptr) {
    const std::u32string cps = py::decode(s);
    return Value(!cps.empty() && std::all_of(cps.begin(), cps.end(), pred));
  }
  return unsupported_construct("str." + std::string(name) + "()");
}

Result<Value> dict_method(const Value& self, std::string_view name, const CallArgs& args) {
  const DictData& d = self.dict();
  if (name == "get") {
    ArgBinder b("get", args, {"key", "default"});
    LES_RETURN_IF_ERROR(b.status());
    if (b.get(0) == nullptr) return type_error("get expected at least 1 argument, got 0");
    if (!hashable(*b.get(0))) return type_error("unhashable type: '" + type_name(*b.get(0)) + "'");
    if (const Value* v = d.find(*b.get(0))) return *v;
    return b.get_or(1, Value::none());
  }
  if (!args.pos.empty() || !args.kw.empty()) return type_error(std::string(name) + "() takes no arguments");
  if (name == "copy") return Value::dict(d);
  std::vector<Value> out;
  out.reserve(d.items.size());
  for (const auto& [k, v] : d.items) {
    if (name == "keys") out.push_back(k);
    else if (name == "values") out.push_back(v);
    else out.push_back(Value::list({k, v}, SeqKind::tuple));
  }
  const SeqKind seq = name == "keys" ? SeqKind::dict_keys : name == "values" ? SeqKind::dict_values
                                                                              : SeqKind::dict_items;
  return Value::list(std::move(out), seq);
}

Result<Value> list_method(const Value& self, std::string_view name, const CallArgs& args) {
  const auto& items = self.list().items;
  if (name == "copy") {
    if (!args.pos.empty() || !args.kw.empty()) return type_error("copy() takes no arguments");
    return Value::list(items);
  }
  if (args.pos.size() != 1 || !args.kw.empty()) return unsupported_construct("list." + std::string(name) + " with these arguments");
  int64_t count = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!equals(items[i], args.pos[0])) continue;
    if (name == "index") return Value(static_cast<int64_t>(i));
    ++count;
  }
  if (name == "index") return value_error("x not in list");
  return Value(count);
}

}  // namespace

MethodKind method_kind(const Value& obj, std::string_view name) {
  switch (obj.kind()) {
    case Kind::string: return among(name, kStrMethods) ? MethodKind::safe : MethodKind::none;
    case Kind::dict:
      if (among(name, kDictSafe)) return MethodKind::safe;
      return among(name, kDictMutating) ? MethodKind::mutating : MethodKind::none;
    case Kind::list:
      if (obj.seq() == SeqKind::list || obj.seq() == SeqKind::tuple || obj.seq() == SeqKind::range) {
        if (name == "index" || name == "count") return MethodKind::safe;
        if (obj.seq() == SeqKind::list && name == "copy") return MethodKind::safe;
        if (obj.seq() == SeqKind::list && among(name, kListMutating)) return MethodKind::mutating;
      }
      return MethodKind::none;
    default: return MethodKind::none;
  }
}

Result<Value> call_method(Evaluator& ev, const Value& obj, std::string_view name, const CallArgs& args) {
  if (obj.is_markup()) return unsupported_construct("str methods on a Markup (|safe) string");
  if (obj.is_string()) return str_method(ev, obj.str(), name, args);
  if (obj.is_dict()) {
    if (name == "fromkeys") return unsupported_construct("dict.fromkeys()");
    return dict_method(obj, name, args);
  }
  if (obj.is_list()) return list_method(obj, name, args);
  return type_error(cat("'", type_name(obj), "' object has no method '", name, "'"));
}

}  // namespace les::jinja
