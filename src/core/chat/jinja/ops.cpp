// Python operators on template values (ops.h).
#include "core/chat/jinja/ops.h"

#include <cmath>
#include <cstdlib>

#include "core/chat/jinja/error.h"
#include "core/chat/jinja/format.h"
#include "core/chat/jinja/pystr.h"

namespace les::jinja {
namespace {

const char* op_symbol(BinOp op) {
  switch (op) {
    case BinOp::add: return "+";
    case BinOp::sub: return "-";
    case BinOp::mul: return "*";
    case BinOp::div: return "/";
    case BinOp::floordiv: return "//";
    case BinOp::mod: return "%";
    case BinOp::pow: return "** or pow()";
  }
  return "?";
}

Status bad_operands(BinOp op, const Value& a, const Value& b) {
  return type_error(std::string("unsupported operand type(s) for ") + op_symbol(op) + ": '" + type_name(a) +
                    "' and '" + type_name(b) + "'");
}

Status int_overflow() { return unsupported_construct("integer arithmetic beyond 64 bits"); }

Result<Value> int_op(BinOp op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
    case BinOp::add:
      if (__builtin_add_overflow(x, y, &r)) return int_overflow();
      return Value(r);
    case BinOp::sub:
      if (__builtin_sub_overflow(x, y, &r)) return int_overflow();
      return Value(r);
    case BinOp::mul:
      if (__builtin_mul_overflow(x, y, &r)) return int_overflow();
      return Value(r);
    case BinOp::div:
      if (y == 0) return zero_division_error();
      return Value(static_cast<double>(x) / static_cast<double>(y));
    case BinOp::floordiv:
    case BinOp::mod: {
      if (y == 0) return zero_division_error();
      if (x == INT64_MIN && y == -1) return int_overflow();
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value(op == BinOp::floordiv ? q : m);
    }
    case BinOp::pow: {
      if (y < 0) {
        if (x == 0) return zero_division_error();
        return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }
      int64_t result = 1, base = x;
      for (int64_t e = y; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(result, base, &result)) return int_overflow();
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) return int_overflow();
      }
      return Value(result);
    }
  }
  return int_overflow();
}

Result<Value> float_op(BinOp op, double x, double y) {
  switch (op) {
    case BinOp::add: return Value(x + y);
    case BinOp::sub: return Value(x - y);
    case BinOp::mul: return Value(x * y);
    case BinOp::div:
      if (y == 0.0) return zero_division_error();
      return Value(x / y);
    case BinOp::floordiv:
    case BinOp::mod: {
      if (y == 0.0) return zero_division_error();
      // CPython's float_divmod.
      double mod = std::fmod(x, y);
      double div = (x - mod) / y;
      if (mod != 0.0) {
        if ((y < 0) != (mod < 0)) {
          mod += y;
          div -= 1.0;
        }
      } else {
        mod = std::copysign(0.0, y);
      }
      double floordiv;
      if (div != 0.0) {
        floordiv = std::floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
      } else {
        floordiv = std::copysign(0.0, x / y);
      }
      return Value(op == BinOp::floordiv ? floordiv : mod);
    }
    case BinOp::pow: {
      if (x == 0.0 && y < 0) return zero_division_error();
      const double r = std::pow(x, y);
      if (std::isnan(r) && !std::isnan(x) && !std::isnan(y)) return unsupported_construct("a complex power");
      if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
        return invalid_argument_error("OverflowError: (34, 'Numerical result out of range')");
      return Value(r);
    }
  }
  return float_op(BinOp::add, x, y);
}

Result<Value> repeat(const Value& seq, int64_t n, size_t max_len) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const std::string& s = seq.str();
    if (!s.empty() && static_cast<uint64_t>(n) > max_len / s.size())
      return limit_error("a string repeated beyond " + std::to_string(max_len) + " bytes");
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += s;
    return seq.is_markup() ? Value::markup(std::move(out)) : Value(std::move(out));
  }
  const auto& items = seq.list().items;
  if (!items.empty() && static_cast<uint64_t>(n) > max_len / items.size())
    return limit_error("a list repeated beyond " + std::to_string(max_len) + " items");
  std::vector<Value> out;
  out.reserve(items.size() * static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out), seq.seq());
}

bool is_plain_seq(const Value& v) { return v.is_list() && (v.seq() == SeqKind::list || v.seq() == SeqKind::tuple); }

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&#34;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

Status undefined_use(const Value& u) {
  std::string hint = u.undefined_hint();
  if (hint.empty()) hint = "'undefined' value";  // Jinja2's message for an anonymous Undefined
  return u.is_unsafe() ? security_error(hint) : undefined_error(hint);
}

Result<Value> binary_op(BinOp op, const Value& a, const Value& b, size_t max_len) {
  if (a.is_undefined()) return undefined_use(a);
  if (b.is_undefined()) return undefined_use(b);
  if (a.is_integral() && b.is_integral()) return int_op(op, a.as_int(), b.as_int());
  if (a.is_number() && b.is_number()) return float_op(op, a.as_double(), b.as_double());
  if (op == BinOp::add) {
    if (a.is_string() && b.is_string()) {
      if (a.str().size() + b.str().size() > max_len)
        return limit_error("a string longer than " + std::to_string(max_len) + " bytes");
      // Markup + str escapes the str, and so does str + Markup (markupsafe).
      if (a.is_markup() || b.is_markup()) {
        std::string text = (a.is_markup() ? a.str() : html_escape(a.str())) +
                           (b.is_markup() ? b.str() : html_escape(b.str()));
        if (text.size() > max_len) return limit_error("a string longer than " + std::to_string(max_len) + " bytes");
        return Value::markup(std::move(text));
      }
      return Value(a.str() + b.str());
    }
    if (is_plain_seq(a) && is_plain_seq(b) && a.seq() == b.seq()) {
      if (a.list().items.size() + b.list().items.size() > max_len)
        return limit_error("a list longer than " + std::to_string(max_len) + " items");
      std::vector<Value> items = a.list().items;
      items.insert(items.end(), b.list().items.begin(), b.list().items.end());
      return Value::list(std::move(items), a.seq());
    }
    if (a.is_string()) return type_error("can only concatenate str (not \"" + type_name(b) + "\") to str");
  }
  if (op == BinOp::mul) {
    if ((a.is_string() || is_plain_seq(a)) && b.is_integral()) return repeat(a, b.as_int(), max_len);
    if ((b.is_string() || is_plain_seq(b)) && a.is_integral()) return repeat(b, a.as_int(), max_len);
  }
  if (op == BinOp::mod && a.is_string()) return unsupported_construct("printf-style '%' formatting of strings");
  return bad_operands(op, a, b);
}

Result<Value> negate(const Value& v, bool minus) {
  if (v.is_undefined()) return undefined_use(v);
  if (v.is_integral()) {
    if (!minus) return Value(v.as_int());
    if (v.as_int() == INT64_MIN) return int_overflow();
    return Value(-v.as_int());
  }
  if (v.is_float()) return Value(minus ? -v.as_double() : v.as_double());
  return type_error(std::string("bad operand type for unary ") + (minus ? "-" : "+") + ": '" + type_name(v) + "'");
}

Result<bool> less(const Value& a, const Value& b) {
  if (a.is_undefined()) return undefined_use(a);
  if (b.is_undefined()) return undefined_use(b);
  if (a.is_integral() && b.is_integral()) return a.as_int() < b.as_int();
  if (a.is_number() && b.is_number()) return a.as_double() < b.as_double();
  if (a.is_string() && b.is_string()) return a.str() < b.str();
  if (is_plain_seq(a) && is_plain_seq(b) && a.seq() == b.seq()) {
    const auto &x = a.list().items, &y = b.list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  return type_error("'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

Result<bool> compare(CmpOp op, const Value& a, const Value& b) {
  switch (op) {
    case CmpOp::eq: return equals(a, b);
    case CmpOp::ne: return !equals(a, b);
    case CmpOp::lt: return less(a, b);
    case CmpOp::gt: return less(b, a);
    case CmpOp::le: {
      if (equals(a, b) && !a.is_undefined() && !b.is_undefined()) {
        LES_RETURN_IF_ERROR(less(a, b).status());  // types must still be comparable
        return true;
      }
      return less(a, b);
    }
    case CmpOp::ge: {
      if (equals(a, b) && !a.is_undefined() && !b.is_undefined()) {
        LES_RETURN_IF_ERROR(less(b, a).status());
        return true;
      }
      return less(b, a);
    }
    case CmpOp::in:
    case CmpOp::not_in: {
      bool found = false;
      if (b.is_string()) {
        if (a.is_undefined()) return undefined_use(a);
        if (!a.is_string())
          return type_error("'in <string>' requires string as left operand, not " + type_name(a));
        found = b.str().find(a.str()) != std::string::npos;
      } else if (b.is_dict()) {
        if (!hashable(a)) return type_error("unhashable type: '" + type_name(a) + "'");
        found = b.dict().find(a) != nullptr;
      } else {
        LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(b));
        for (const Value& item : items)
          if (equals(item, a)) {
            found = true;
            break;
          }
      }
      return op == CmpOp::in ? found : !found;
    }
  }
  return false;
}

Result<std::vector<Value>> iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::undefined: return std::vector<Value>();
    case Kind::string: {
      std::vector<Value> out;
      for (char32_t c : py::decode(v.str())) out.emplace_back(py::encode(std::u32string(1, c)));
      return out;
    }
    case Kind::list: {
      const ListData& l = v.list();
      if (l.seq != SeqKind::generator) return l.items;
      std::vector<Value> rest(l.items.begin() + static_cast<std::ptrdiff_t>(std::min(l.pos, l.items.size())),
                              l.items.end());
      l.pos = l.items.size();
      return rest;
    }
    case Kind::dict: {
      std::vector<Value> keys;
      keys.reserve(v.dict().items.size());
      for (const auto& kv : v.dict().items) keys.push_back(kv.first);
      return keys;
    }
    default: break;
  }
  return type_error("'" + type_name(v) + "' object is not iterable");
}

Result<int64_t> length(const Value& v) {
  switch (v.kind()) {
    case Kind::undefined: return int64_t{0};
    case Kind::string: return static_cast<int64_t>(py::length(v.str()));
    case Kind::list:
      if (v.seq() == SeqKind::generator) break;
      return static_cast<int64_t>(v.list().items.size());
    case Kind::dict: return static_cast<int64_t>(v.dict().items.size());
    default: break;
  }
  return type_error("object of type '" + type_name(v) + "' has no len()");
}

namespace {

// s without surrounding whitespace and with `_` between digits removed; nullopt
// for a misplaced `_`.
std::optional<std::string> clean_number(const std::string& s) {
  const std::string t = py::strip(s, std::nullopt);
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '_') {
      out.push_back(t[i]);
      continue;
    }
    const bool ok = i > 0 && i + 1 < t.size() && std::isxdigit(static_cast<unsigned char>(t[i - 1])) &&
                    std::isxdigit(static_cast<unsigned char>(t[i + 1]));
    if (!ok) return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<int64_t> parse_int(const std::string& s, int base) {
  auto t = clean_number(s);
  if (!t || t->empty()) return std::nullopt;
  std::string body = *t;
  bool neg = false;
  if (body[0] == '+' || body[0] == '-') {
    neg = body[0] == '-';
    body.erase(0, 1);
  }
  if (body.size() > 2 && body[0] == '0') {
    const char p = static_cast<char>(body[1] | 0x20);
    const int prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefixed != 0 && (base == prefixed || base == 0)) {
      body.erase(0, 2);
      base = prefixed;
    }
  }
  if (base == 0) base = 10;
  if (body.empty()) return std::nullopt;
  for (char c : body) {
    const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                  : std::isalpha(static_cast<unsigned char>(c)) ? (c | 0x20) - 'a' + 10
                                                                 : 99;
    if (d >= base) return std::nullopt;
  }
  errno = 0;
  const long long v = std::strtoll(body.c_str(), nullptr, base);
  if (errno == ERANGE) return std::nullopt;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

std::optional<double> parse_float(const std::string& s) {
  auto t = clean_number(s);
  if (!t || t->empty()) return std::nullopt;
  std::string lower;
  for (char c : *t) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::string mag = lower;
  if (!mag.empty() && (mag[0] == '+' || mag[0] == '-')) mag.erase(0, 1);
  if (mag == "inf" || mag == "infinity" || mag == "nan") return std::strtod(lower.c_str(), nullptr);
  for (char c : mag)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != '+' && c != '-')
      return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(lower.c_str(), &end);
  if (end != lower.c_str() + lower.size()) return std::nullopt;
  return v;
}

}  // namespace les::jinja
