// Python str semantics on UTF-8 (pystr.h).
#include "core/chat/jinja/pystr.h"

#include <utf8proc.h>

#include <algorithm>

#include "core/tokenizer/utf8.h"

namespace les::jinja::py {
namespace {

constexpr char32_t kEscapeBase = 0xDC80;  // surrogateescape: invalid byte b (>= 0x80) is U+DC00 + b

int category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

bool is_cased(char32_t c) {
  const int cat = category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}

template <typename Fn>
std::string map_cps(std::string_view s, Fn&& fn) {
  std::u32string cps = decode(s);
  std::u32string out;
  out.reserve(cps.size());
  fn(cps, out);
  return encode(out);
}

bool in_chars(char32_t c, const std::u32string& set) { return set.find(c) != std::u32string::npos; }

}  // namespace

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const utf8::Decoded d = utf8::decode(s, i);
    const auto b = static_cast<uint8_t>(s[i]);
    out.push_back(d.valid ? d.cp : (b < 0x80 ? char32_t{b} : kEscapeBase + (b - 0x80)));
    i += d.len;
  }
  return out;
}

std::string encode(std::u32string_view cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) {
    if (c >= kEscapeBase && c < kEscapeBase + 0x80)
      out.push_back(static_cast<char>(0x80 + (c - kEscapeBase)));
    else
      utf8::append(out, c);
  }
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i += utf8::decode(s, i).len) ++n;
  return n;
}

bool is_space(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  if (c == 0x85) return true;
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
  return p->category == UTF8PROC_CATEGORY_ZS || p->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
         p->bidi_class == UTF8PROC_BIDI_CLASS_B || p->bidi_class == UTF8PROC_BIDI_CLASS_S;
}

bool is_printable(char32_t c) {
  if (c == ' ') return true;
  if (c < 0x20 || c == 0x7F) return false;
  if (c < 0x7F) return true;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS: return false;
    default: return true;
  }
}

bool is_alpha(char32_t c) {
  const int cat = category(c);
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}
bool is_decimal(char32_t c) { return category(c) == UTF8PROC_CATEGORY_ND; }
bool is_digit(char32_t c) {
  // Decimal digits and the superscript / subscript digits (Numeric_Type=Digit).
  return is_decimal(c) || c == 0xB2 || c == 0xB3 || c == 0xB9 || (c >= 0x2070 && c <= 0x2079 && c != 0x2071 &&
                                                                     c != 0x2072 && c != 0x2073) ||
         (c >= 0x2080 && c <= 0x2089);
}
bool is_alnum(char32_t c) {
  const int cat = category(c);
  return is_alpha(c) || cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}
bool is_word(char32_t c) { return c == '_' || is_alnum(c); }
bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
         c == 0x2028 || c == 0x2029;
}
char32_t to_upper(char32_t c) { return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c))); }
char32_t to_lower(char32_t c) { return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))); }
bool is_upper_char(char32_t c) {
  const int cat = category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT;
}
bool is_lower_char(char32_t c) { return category(c) == UTF8PROC_CATEGORY_LL; }

std::string upper(std::string_view s) {
  return map_cps(s, [](const std::u32string& in, std::u32string& out) {
    for (char32_t c : in) {
      if (c == 0xDF) {
        out += U"SS";
      } else {
        out.push_back(to_upper(c));
      }
    }
  });
}

std::string lower(std::string_view s) {
  return map_cps(s, [](const std::u32string& in, std::u32string& out) {
    for (char32_t c : in) out.push_back(to_lower(c));
  });
}

std::string capitalize(std::string_view s) {
  return map_cps(s, [](const std::u32string& in, std::u32string& out) {
    for (size_t i = 0; i < in.size(); ++i)
      out.push_back(i == 0 ? static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(in[i])))
                           : to_lower(in[i]));
  });
}

std::string title(std::string_view s) {
  return map_cps(s, [](const std::u32string& in, std::u32string& out) {
    bool previous_cased = false;
    for (char32_t c : in) {
      if (is_cased(c)) {
        out.push_back(previous_cased ? to_lower(c)
                                     : static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(c))));
        previous_cased = true;
      } else {
        out.push_back(c);
        previous_cased = false;
      }
    }
  });
}

std::string swapcase(std::string_view s) {
  return map_cps(s, [](const std::u32string& in, std::u32string& out) {
    for (char32_t c : in) out.push_back(is_upper_char(c) ? to_lower(c) : is_lower_char(c) ? to_upper(c) : c);
  });
}

bool isupper(std::string_view s) {
  bool cased = false;
  for (char32_t c : decode(s)) {
    if (is_lower_char(c)) return false;
    if (is_upper_char(c)) cased = true;
  }
  return cased;
}

bool islower(std::string_view s) {
  bool cased = false;
  for (char32_t c : decode(s)) {
    if (is_upper_char(c)) return false;
    if (is_lower_char(c)) cased = true;
  }
  return cased;
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, StripSide side) {
  const std::u32string cps = decode(s);
  const std::u32string set = chars ? decode(*chars) : std::u32string();
  auto drop = [&](char32_t c) { return chars ? in_chars(c, set) : is_space(c); };
  size_t begin = 0, end = cps.size();
  if (side != StripSide::right)
    while (begin < end && drop(cps[begin])) ++begin;
  if (side != StripSide::left)
    while (end > begin && drop(cps[end - 1])) --end;
  return encode(std::u32string_view(cps).substr(begin, end - begin));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      const size_t at = s.find(*sep, start);
      if (at == std::string_view::npos) break;
      out.emplace_back(s.substr(start, at - start));
      start = at + sep->size();
    }
    out.emplace_back(s.substr(start));
    return out;
  }
  const std::u32string cps = decode(s);
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && is_space(cps[i])) ++i;
    if (i == cps.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      size_t end = cps.size();
      while (end > i && is_space(cps[end - 1])) --end;
      out.push_back(encode(std::u32string_view(cps).substr(i, end - i)));
      return out;
    }
    size_t j = i;
    while (j < cps.size() && !is_space(cps[j])) ++j;
    out.push_back(encode(std::u32string_view(cps).substr(i, j - i)));
    i = j;
  }
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t end = s.size();
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      const size_t at = s.rfind(*sep, end - sep->size());
      if (at == std::string_view::npos) break;
      out.emplace_back(s.substr(at + sep->size(), end - at - sep->size()));
      end = at;
    }
    out.emplace_back(s.substr(0, end));
    std::reverse(out.begin(), out.end());
    return out;
  }
  const std::u32string cps = decode(s);
  size_t j = cps.size();
  while (j > 0) {
    while (j > 0 && is_space(cps[j - 1])) --j;
    if (j == 0) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      size_t begin = 0;
      while (begin < j && is_space(cps[begin])) ++begin;
      out.push_back(encode(std::u32string_view(cps).substr(begin, j - begin)));
      break;
    }
    size_t i = j;
    while (i > 0 && !is_space(cps[i - 1])) --i;
    out.push_back(encode(std::u32string_view(cps).substr(i, j - i)));
    j = i;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> splitlines(std::string_view s) {
  const std::u32string cps = decode(s);
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    if (!is_line_break(cps[i])) continue;
    out.push_back(encode(std::u32string_view(cps).substr(start, i - start)));
    if (cps[i] == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < cps.size()) out.push_back(encode(std::u32string_view(cps).substr(start)));
  return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
  std::string out;
  int64_t done = 0;
  if (old.empty()) {
    const std::u32string cps = decode(s);
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      if (i < cps.size()) out += encode(std::u32string_view(cps).substr(i, 1));
    }
    return out;
  }
  size_t start = 0;
  while (count < 0 || done < count) {
    const size_t at = s.find(old, start);
    if (at == std::string_view::npos) break;
    out.append(s.substr(start, at - start));
    out.append(repl);
    start = at + old.size();
    ++done;
  }
  out.append(s.substr(start));
  return out;
}

std::string repr(std::string_view s) {
  const std::u32string cps = decode(s);
  const bool has_single = cps.find(U'\'') != std::u32string::npos;
  const bool has_double = cps.find(U'"') != std::u32string::npos;
  const char32_t quote = has_single && !has_double ? U'"' : U'\'';
  std::u32string out;
  out.push_back(quote);
  static const char kHex[] = "0123456789abcdef";
  auto hex = [&](char32_t c, int digits) {
    for (int d = digits - 1; d >= 0; --d) out.push_back(static_cast<char32_t>(kHex[(c >> (4 * d)) & 0xF]));
  };
  for (char32_t c : cps) {
    if (c == quote || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\t') {
      out += U"\\t";
    } else if (c == '\n') {
      out += U"\\n";
    } else if (c == '\r') {
      out += U"\\r";
    } else if (c >= kEscapeBase && c < kEscapeBase + 0x80) {
      out += U"\\udc";  // Python prints an escaped byte as its lone surrogate
      hex(c & 0xFF, 2);
    } else if (!is_printable(c)) {
      if (c <= 0xFF) {
        out += U"\\x";
        hex(c, 2);
      } else if (c <= 0xFFFF) {
        out += U"\\u";
        hex(c, 4);
      } else {
        out += U"\\U";
        hex(c, 8);
      }
    } else {
      out.push_back(c);
    }
  }
  out.push_back(quote);
  return encode(out);
}

std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                                   int64_t step) {
  // CPython's PySlice_AdjustIndices.
  int64_t lo, hi;
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt, int64_t low, int64_t high) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = low;
    } else if (x >= n) {
      x = high;
    }
    return x;
  };
  if (step > 0) {
    lo = adjust(start, 0, 0, n);
    hi = adjust(stop, n, 0, n);
  } else {
    lo = adjust(start, n - 1, -1, n - 1);
    hi = adjust(stop, -1, -1, n - 1);
  }
  std::vector<int64_t> idx;
  if (step > 0)
    for (int64_t i = lo; i < hi; i += step) idx.push_back(i);
  else
    for (int64_t i = lo; i > hi; i += step) idx.push_back(i);
  return idx;
}

}  // namespace les::jinja::py
