// Values as text (format.h).
#include "core/chat/jinja/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/chat/jinja/error.h"
#include "core/chat/jinja/object.h"
#include "core/chat/jinja/pystr.h"

namespace les::jinja {
namespace {

Result<std::string> repr_items(const ListData& l, const char* open, const char* close) {
  std::string out = open;
  for (size_t i = 0; i < l.items.size(); ++i) {
    if (i > 0) out += ", ";
    LES_ASSIGN_OR_RETURN(std::string item, to_repr(l.items[i]));
    out += item;
  }
  if (l.seq == SeqKind::tuple && l.items.size() == 1) out += ",";
  out += close;
  return out;
}

Result<std::string> repr_list(const ListData& l) {
  switch (l.seq) {
    case SeqKind::list: return repr_items(l, "[", "]");
    case SeqKind::tuple: return repr_items(l, "(", ")");
    case SeqKind::dict_keys: return repr_items(l, "dict_keys([", "])");
    case SeqKind::dict_values: return repr_items(l, "dict_values([", "])");
    case SeqKind::dict_items: return repr_items(l, "dict_items([", "])");
    case SeqKind::range: {
      std::string s = "range(" + std::to_string(l.range_start) + ", " + std::to_string(l.range_stop);
      if (l.range_step != 1) s += ", " + std::to_string(l.range_step);
      return s + ")";
    }
    case SeqKind::generator: break;
  }
  return unsupported_construct("printing a generator object (add |list)");
}

Result<std::string> repr_dict(const DictData& d) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : d.items) {
    if (!first) out += ", ";
    first = false;
    LES_ASSIGN_OR_RETURN(std::string ks, to_repr(k));
    LES_ASSIGN_OR_RETURN(std::string vs, to_repr(v));
    out += ks + ": " + vs;
  }
  return out + "}";
}

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  static const char kHex[] = "0123456789abcdef";
  auto u_escape = [&](uint32_t c) {
    out += "\\u";
    for (int d = 3; d >= 0; --d) out.push_back(kHex[(c >> (4 * d)) & 0xF]);
  };
  out.push_back('"');
  for (char32_t c : py::decode(s)) {
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
      if (c >= 0x10000) {
        const uint32_t v = c - 0x10000;
        u_escape(0xD800 + (v >> 10));
        u_escape(0xDC00 + (v & 0x3FF));
      } else {
        u_escape(c);
      }
    } else {
      out += py::encode(std::u32string(1, c));
    }
  }
  out.push_back('"');
}

struct JsonWriter {
  const JsonOptions& opt;
  std::string item_sep, key_sep;
  std::string out;

  Status number(const Value& v) {
    if (v.is_bool()) {
      out += v.as_bool() ? "true" : "false";
    } else if (v.is_int()) {
      out += std::to_string(v.as_int());
    } else {
      const double f = v.as_double();
      out += std::isnan(f) ? "NaN" : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity") : format_float(f);
    }
    return Status();
  }

  void newline(int level) {
    out.push_back('\n');
    for (int i = 0; i < level; ++i) out += *opt.indent;
  }

  Result<std::string> key_text(const Value& k) {
    if (k.is_string()) return k.str();
    if (k.is_none()) return std::string("null");
    if (k.is_number()) {
      JsonWriter w{opt, item_sep, key_sep, {}};
      LES_RETURN_IF_ERROR(w.number(k));
      return w.out;
    }
    return type_error("keys must be str, int, float, bool or None, not " + type_name(k));
  }

  Status write(const Value& v, int level) {
    if (level > 256) return limit_error("tojson nesting deeper than 256");
    switch (v.kind()) {
      case Kind::none: out += "null"; return Status();
      case Kind::boolean:
      case Kind::integer:
      case Kind::floating: return number(v);
      case Kind::string: json_string(out, v.str(), opt.ensure_ascii); return Status();
      case Kind::list: {
        if (v.seq() != SeqKind::list && v.seq() != SeqKind::tuple) break;
        const auto& items = v.list().items;
        if (items.empty()) {
          out += "[]";
          return Status();
        }
        out.push_back('[');
        for (size_t i = 0; i < items.size(); ++i) {
          if (i > 0) out += item_sep;
          if (opt.indent) newline(level + 1);
          LES_RETURN_IF_ERROR(write(items[i], level + 1));
        }
        if (opt.indent) newline(level);
        out.push_back(']');
        return Status();
      }
      case Kind::dict: {
        std::vector<std::pair<std::string, const Value*>> entries;
        for (const auto& [k, val] : v.dict().items) {
          LES_ASSIGN_OR_RETURN(std::string ks, key_text(k));
          entries.emplace_back(std::move(ks), &val);
        }
        if (opt.sort_keys)
          std::stable_sort(entries.begin(), entries.end(),
                           [](const auto& a, const auto& b) { return a.first < b.first; });
        if (entries.empty()) {
          out += "{}";
          return Status();
        }
        out.push_back('{');
        for (size_t i = 0; i < entries.size(); ++i) {
          if (i > 0) out += item_sep;
          if (opt.indent) newline(level + 1);
          json_string(out, entries[i].first, opt.ensure_ascii);
          out += key_sep;
          LES_RETURN_IF_ERROR(write(*entries[i].second, level + 1));
        }
        if (opt.indent) newline(level);
        out.push_back('}');
        return Status();
      }
      default: break;
    }
    return type_error("Object of type " + type_name(v) + " is not JSON serializable");
  }
};

}  // namespace

std::string format_float(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  if (f == 0.0) return std::signbit(f) ? "-0.0" : "0.0";
  char buf[64];
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]XX.
  const auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp10 = std::stoi(sci.substr(e + 1));
  const int decpt = exp10 + 1;  // position of the decimal point after the first digit
  std::string out = sign;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    } else if (static_cast<size_t>(decpt) >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  return out + ebuf;
}

Result<std::string> to_str(const Value& v) {
  switch (v.kind()) {
    case Kind::undefined: return std::string();
    case Kind::string: return v.str();
    default: return to_repr(v);
  }
}

namespace {

// to_repr's recursion on this thread: a namespace may hold itself (Python
// prints "{...}" there), and a value built legally is never deeper than kMaxValueDepth.
thread_local uint32_t repr_nesting = 0;

struct ReprNesting {
  ReprNesting() { ++repr_nesting; }
  ~ReprNesting() { --repr_nesting; }
  ReprNesting(const ReprNesting&) = delete;
  ReprNesting& operator=(const ReprNesting&) = delete;
};

}  // namespace

Result<std::string> to_repr(const Value& v) {
  ReprNesting nesting;
  if (repr_nesting > kMaxValueDepth + 2) return unsupported_construct("printing a value that contains itself");
  switch (v.kind()) {
    case Kind::undefined: return std::string("Undefined");
    case Kind::none: return std::string("None");
    case Kind::boolean: return std::string(v.as_bool() ? "True" : "False");
    case Kind::integer: return std::to_string(v.as_int());
    case Kind::floating: return format_float(v.as_double());
    case Kind::string:
      if (v.is_markup()) return "Markup(" + py::repr(v.str()) + ")";
      return py::repr(v.str());
    case Kind::list: return repr_list(v.list());
    case Kind::dict: return repr_dict(v.dict());
    case Kind::object: return v.object().repr();
  }
  return std::string();
}

Result<std::string> to_json(const Value& v, const JsonOptions& options) {
  JsonWriter w{options, options.item_separator.value_or(options.indent ? "," : ", "),
               options.key_separator.value_or(": "), {}};
  LES_RETURN_IF_ERROR(w.write(v, 0));
  return std::move(w.out);
}

namespace {

Result<Value> from_json_at(const nlohmann::ordered_json& j, int depth) {
  if (depth > 512) return limit_error("JSON nested deeper than 512");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
      return unsupported_construct("an integer beyond 64 bits in JSON input");
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) {
        LES_ASSIGN_OR_RETURN(Value item, from_json_at(e, depth + 1));
        items.push_back(std::move(item));
      }
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      DictData d;
      d.items.reserve(j.size());
      for (const auto& [k, e] : j.items()) {
        LES_ASSIGN_OR_RETURN(Value item, from_json_at(e, depth + 1));
        d.items.emplace_back(Value(k), std::move(item));
      }
      return Value::dict(std::move(d));
    }
    default: return unsupported_construct("binary JSON values");
  }
}

}  // namespace

Result<Value> from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

}  // namespace les::jinja
