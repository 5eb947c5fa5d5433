// The Jinja lexer (lexer.h).
#include "core/chat/jinja/lexer.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "core/chat/jinja/error.h"
#include "core/chat/jinja/pystr.h"
#include "core/tokenizer/utf8.h"

namespace les::jinja {
namespace {

// Newlines normalised to \n; one trailing newline dropped.
std::string normalise(std::string_view src) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out.push_back(src[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Bytes of Python-\s whitespace at s[pos...].
size_t space_run(std::string_view s, size_t pos) {
  size_t i = pos;
  while (i < s.size()) {
    const utf8::Decoded d = utf8::decode(s, i);
    if (!d.valid || !py::is_space(d.cp)) break;
    i += d.len;
  }
  return i - pos;
}

// Length of s without its trailing whitespace (str.rstrip()).
size_t rstrip_length(std::string_view s) {
  size_t keep = 0;
  for (size_t i = 0; i < s.size();) {
    const utf8::Decoded d = utf8::decode(s, i);
    i += d.len;
    if (!d.valid || !py::is_space(d.cp)) keep = i;
  }
  return keep;
}

int count_newlines(std::string_view s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident(char c) { return is_ident_start(c) || is_digit(c); }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::string src, const LexOptions& opt) : s_(std::move(src)), opt_(opt) {}

  Result<std::vector<Token>> run() {
    while (pos_ < s_.size()) LES_RETURN_IF_ERROR(root());
    push(Tok::eof, "");
    return std::move(out_);
  }

 private:
  std::string s_;
  LexOptions opt_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> out_;

  void push(Tok t, std::string text) {
    Token tok;
    tok.type = t;
    tok.text = std::move(text);
    tok.line = line_;
    out_.push_back(std::move(tok));
  }

  // Advances over s_[pos_, to), counting lines; line_starting_ follows the last byte.
  void advance(size_t to) {
    line_ += count_newlines(std::string_view(s_).substr(pos_, to - pos_));
    if (to > pos_) line_starting_ = s_[to - 1] == '\n';
    pos_ = to;
  }

  // Emits the text before a tag after the tag's whitespace control.
  void emit_text(std::string_view text, char sign, bool variable_tag) {
    size_t keep = text.size();
    if (sign == '-') {
      keep = rstrip_length(text);
    } else if (sign != '+' && opt_.lstrip_blocks && !variable_tag) {
      const size_t nl = text.rfind('\n');
      const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && l_pos < text.size() && space_run(text, l_pos) == text.size() - l_pos)
        keep = l_pos;
    }
    if (keep > 0) push(Tok::data, std::string(text.substr(0, keep)));
  }

  // Length of the end of a block / comment tag at p (`+%}`, `-%}` + whitespace,
  // `%}` + optional newline), or 0.
  size_t tag_end_at(size_t p, char close) const {
    const std::string_view s(s_);
    auto at = [&](size_t i, char c) { return i < s.size() && s[i] == c; };
    if ((at(p, '+') || at(p, '-')) && at(p + 1, close) && at(p + 2, '}')) {
      if (s[p] == '+') return 3;
      return 3 + space_run(s, p + 3);
    }
    if (at(p, close) && at(p + 1, '}')) return 2 + ((opt_.trim_blocks && at(p + 2, '\n')) ? 1 : 0);
    return 0;
  }

  // At `{%` + sign + spaces + `word` + spaces + end: the tag's length, or 0.
  size_t word_tag_at(size_t p, std::string_view word, bool allow_trim) const {
    const std::string_view s(s_);
    if (s.compare(p, 2, "{%") != 0) return 0;
    size_t i = p + 2;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    i += space_run(s, i);
    if (s.compare(i, word.size(), word) != 0) return 0;
    i += word.size();
    i += space_run(s, i);
    size_t end = tag_end_at(i, '%');
    if (end == 0) return 0;
    if (!allow_trim && s[i] == '%' && end == 3) end = 2;  // `{% raw %}` keeps the newline after it
    if (!allow_trim && s[i] == '+') return 0;             // raw's begin tag has no `+%}` form
    return i + end - p;
  }

  Status root() {
    const std::string_view s(s_);
    size_t at = pos_;
    for (;; ++at) {
      at = s.find('{', at);
      if (at == std::string_view::npos || at + 1 >= s.size()) {
        push(Tok::data, std::string(s.substr(pos_)));
        advance(s.size());
        return Status();
      }
      const char c = s[at + 1];
      if (c == '{' || c == '%' || c == '#') break;
    }
    const char kind = s[at + 1];
    const char sign = at + 2 < s.size() && (s[at + 2] == '-' || s[at + 2] == '+') ? s[at + 2] : '\0';
    emit_text(s.substr(pos_, at - pos_), sign, kind == '{');
    advance(at);
    if (kind == '%') {
      if (size_t n = word_tag_at(at, "raw", false)) return raw(n);
    }
    const size_t body = at + 2 + (sign != '\0' ? 1 : 0);
    if (kind == '#') return comment(body);
    push(kind == '{' ? Tok::var_begin : Tok::block_begin, "");
    advance(body);
    return inside(kind == '{');
  }

  Status comment(size_t body) {
    const std::string_view s(s_);
    for (size_t q = s.find("#}", body); q != std::string_view::npos; q = s.find("#}", q + 1)) {
      size_t end;
      if (q > body && (s[q - 1] == '-' || s[q - 1] == '+')) {
        end = s[q - 1] == '+' ? q + 2 : q + 2 + space_run(s, q + 2);
      } else {
        end = q + 2 + ((opt_.trim_blocks && q + 2 < s.size() && s[q + 2] == '\n') ? 1 : 0);
      }
      advance(end);
      return Status();
    }
    return syntax_error("Missing end of comment tag", line_);
  }

  Status raw(size_t begin_len) {
    const std::string_view s(s_);
    advance(pos_ + begin_len);
    for (size_t q = s.find("{%", pos_); q != std::string_view::npos; q = s.find("{%", q + 1)) {
      const size_t n = word_tag_at(q, "endraw", true);
      if (n == 0) continue;
      const char sign = q + 2 < s.size() && (s[q + 2] == '-' || s[q + 2] == '+') ? s[q + 2] : '\0';
      emit_text(s.substr(pos_, q - pos_), sign, false);
      advance(q + n);
      return Status();
    }
    return syntax_error("Missing end of raw directive", line_);
  }

  Status inside(bool variable) {
    const std::string_view s(s_);
    std::string balance;
    while (true) {
      if (pos_ >= s.size()) return Status();  // the parser reports the missing end
      if (balance.empty()) {
        size_t n = 0;
        if (variable) {
          if (s.compare(pos_, 3, "-}}") == 0) n = 3 + space_run(s, pos_ + 3);
          else if (s.compare(pos_, 2, "}}") == 0) n = 2;
        } else {
          n = tag_end_at(pos_, '%');
        }
        if (n > 0) {
          push(variable ? Tok::var_end : Tok::block_end, "");
          advance(pos_ + n);
          return Status();
        }
      }
      if (size_t n = space_run(s, pos_)) {
        advance(pos_ + n);
        continue;
      }
      LES_RETURN_IF_ERROR(token(balance));
    }
  }

  Status token(std::string& balance) {
    const std::string_view s(s_);
    const char c = s[pos_];
    if (is_digit(c)) return number();
    if (is_ident_start(c)) {
      size_t e = pos_;
      while (e < s.size() && is_ident(s[e])) ++e;
      push(Tok::name, std::string(s.substr(pos_, e - pos_)));
      advance(e);
      return Status();
    }
    if (c == '\'' || c == '"') return string_literal(c);
    static const char* const kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
                                       "]",  "(",  ")",  "{",  "}",  ">",  "<", "=", ".", ":", "|", ",", ";"};
    for (const char* op : kOps) {
      const std::string_view o(op);
      if (s.compare(pos_, o.size(), o) != 0) continue;
      if (o == "(" || o == "[" || o == "{") {
        balance.push_back(o == "(" ? ')' : o == "[" ? ']' : '}');
      } else if (o == ")" || o == "]" || o == "}") {
        if (balance.empty()) return syntax_error("unexpected '" + std::string(o) + "'", line_);
        if (balance.back() != o[0])
          return syntax_error("unexpected '" + std::string(o) + "', expected '" + balance.back() + "'", line_);
        balance.pop_back();
      }
      push(Tok::op, std::string(o));
      advance(pos_ + o.size());
      return Status();
    }
    const utf8::Decoded d = utf8::decode(s, pos_);
    return syntax_error("unexpected char " + py::repr(s.substr(pos_, d.len)) + " at " + std::to_string(pos_), line_);
  }

  // Digits with single '_' separators from p; returns the end.
  size_t digits(size_t p, bool (*ok)(char)) const {
    const std::string_view s(s_);
    size_t e = p;
    while (e < s.size() && (ok(s[e]) || (s[e] == '_' && e > p && e + 1 < s.size() && ok(s[e + 1])))) ++e;
    return e;
  }

  Status number() {
    const std::string_view s(s_);
    const size_t start = pos_;
    auto strip = [](std::string_view t) {
      std::string r;
      for (char ch : t)
        if (ch != '_') r.push_back(ch);
      return r;
    };
    size_t e = digits(start, is_digit);
    // A float: digits with a fraction and/or an exponent (not after a '.', so `a.0.1` stays attributes).
    const bool after_dot = start > 0 && s[start - 1] == '.';
    size_t f = e;
    bool is_float = false;
    if (!after_dot && f + 1 < s.size() && s[f] == '.' && is_digit(s[f + 1])) {
      f = digits(f + 1, is_digit);
      is_float = true;
    }
    if (!after_dot && f < s.size() && (s[f] == 'e' || s[f] == 'E')) {
      size_t x = f + 1;
      if (x < s.size() && (s[x] == '+' || s[x] == '-')) ++x;
      if (x < s.size() && is_digit(s[x])) {
        f = digits(x, is_digit);
        is_float = true;
      }
    }
    Token tok;
    tok.line = line_;
    if (is_float) {
      tok.type = Tok::floating;
      tok.fval = std::strtod(strip(s.substr(start, f - start)).c_str(), nullptr);
      out_.push_back(std::move(tok));
      advance(f);
      return Status();
    }
    int base = 10;
    size_t d0 = start;
    if (s[start] == '0' && start + 1 < s.size()) {
      const char p = static_cast<char>(s[start + 1] | 0x20);
      base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 10;
      if (base != 10) {
        d0 = start + 2;
        if (d0 < s.size() && s[d0] == '_') ++d0;
        e = d0;
        while (e < s.size() && ((hex_value(s[e]) >= 0 && hex_value(s[e]) < base) || s[e] == '_')) ++e;
        if (e == d0) return syntax_error("invalid integer literal", line_);
      } else {
        e = start + 1;  // a decimal literal starting with 0 is 0 (or 0_0...)
        while (e + 1 < s.size() && (s[e] == '0' || (s[e] == '_' && s[e + 1] == '0'))) ++e;
      }
    }
    const std::string text = strip(s.substr(d0, e - d0));
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, base);
    if (errno == ERANGE) return unsupported_construct("an integer literal beyond 64 bits");
    tok.type = Tok::integer;
    tok.ival = v;
    out_.push_back(std::move(tok));
    advance(e);
    return Status();
  }

  Status string_literal(char quote) {
    const std::string_view s(s_);
    size_t e = pos_ + 1;
    while (e < s.size() && s[e] != quote) e += s[e] == '\\' ? 2 : 1;
    if (e >= s.size()) return syntax_error("unexpected char " + py::repr(std::string(1, quote)), line_);
    std::string value;
    LES_RETURN_IF_ERROR(unescape(s.substr(pos_ + 1, e - pos_ - 1), value));
    push(Tok::string, std::move(value));
    advance(e + 1);
    return Status();
  }

  // Python's unicode-escape decoding of a literal's body; non-ASCII text stays
  // as is (Jinja encodes it with backslashreplace first, so `\` + non-ASCII
  // gives the backslash and the code point's \x / \u / \U spelling).
  Status unescape(std::string_view body, std::string& out) const {
    for (size_t i = 0; i < body.size();) {
      if (body[i] != '\\' || i + 1 >= body.size()) {
        out.push_back(body[i++]);
        continue;
      }
      const char c = body[i + 1];
      i += 2;
      auto hex = [&](int n, uint32_t& v) {
        v = 0;
        for (int k = 0; k < n; ++k) {
          if (i >= body.size() || hex_value(body[i]) < 0) return false;
          v = v * 16 + static_cast<uint32_t>(hex_value(body[i++]));
        }
        return true;
      };
      uint32_t v = 0;
      switch (c) {
        case '\n': break;
        case '\\': out.push_back('\\'); break;
        case '\'': out.push_back('\''); break;
        case '"': out.push_back('"'); break;
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'v': out.push_back('\v'); break;
        case 'x':
        case 'u':
        case 'U':
          if (!hex(c == 'x' ? 2 : c == 'u' ? 4 : 8, v) || v > 0x10FFFF)
            return syntax_error("malformed \\" + std::string(1, c) + " escape in a string", line_);
          out += py::encode(std::u32string(1, static_cast<char32_t>(v)));
          break;
        case 'N': return unsupported_construct("\\N{...} escapes in strings");
        default:
          if (c >= '0' && c <= '7') {
            v = static_cast<uint32_t>(c - '0');
            for (int k = 0; k < 2 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++k)
              v = v * 8 + static_cast<uint32_t>(body[i++] - '0');
            out += py::encode(std::u32string(1, static_cast<char32_t>(v)));
          } else if (static_cast<unsigned char>(c) >= 0x80) {
            const utf8::Decoded d = utf8::decode(body, i - 1);
            char buf[16];
            std::snprintf(buf, sizeof buf, d.cp <= 0xFF ? "\\x%02x" : d.cp <= 0xFFFF ? "\\u%04x" : "\\U%08x",
                          static_cast<unsigned>(d.cp));
            out += "\\";
            out += buf;
            i += d.len - 1;
          } else {
            out.push_back('\\');
            out.push_back(c);
          }
      }
    }
    return Status();
  }
};

}  // namespace

Result<std::vector<Token>> lex(std::string_view source, const LexOptions& options) {
  return Lexer(normalise(source), options).run();
}

}  // namespace les::jinja
