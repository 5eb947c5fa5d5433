// SplitRegex pattern parser (split_regex_parse.h).
#include "core/tokenizer/split_regex_parse.h"

#include <fmt/format.h>

#include "core/tokenizer/unicode_class.h"
#include "core/tokenizer/utf8.h"

namespace les::regex_tree {

namespace {

SymbolSet single(uint32_t c) {
  SymbolSet s;
  s.add(c, c);
  return s;
}

// The ASCII members of one unicode_class() flag, plus the category byte
// (categories mode; split_regex.h explains the '~' exception).
SymbolSet category_set(uint32_t flag, uint32_t byte) {
  SymbolSet s = single(byte);
  for (uint32_t c = 0; c < 0x80; ++c) {
    if ((unicode_class(c) & flag) != 0 && !(flag == kCpSymbol && c == '~')) s.add(c, c);
  }
  return s;
}

SymbolSet space_set() {
  SymbolSet s;
  s.add('\t', '\r');  // \t \n \v \f \r
  s.add(' ', ' ');
  return s;
}

SymbolSet digit_set() {
  SymbolSet s;
  s.add('0', '9');
  return s;
}

SymbolSet word_set() {
  SymbolSet s = digit_set();
  s.add('A', 'Z');
  s.add('a', 'z');
  s.add('_', '_');
  return s;
}

SymbolSet complemented(SymbolSet s) {
  s.complement();
  return s;
}

class Parser {
 public:
  explicit Parser(std::string_view pattern) : pattern_(pattern) {
    for (size_t i = 0; i < pattern.size();) {
      const utf8::Decoded d = utf8::decode(pattern, i);
      if (!d.valid) {
        error_ = fmt::format("invalid UTF-8 at byte {}", i);
        break;
      }
      cps_.push_back(d.cp);
      i += d.len;
    }
    mode_ = pattern.find("\\p{") != std::string_view::npos ? SymbolMode::categories : SymbolMode::code_points;
  }

  SymbolMode mode() const { return mode_; }

  Result<Node> parse() {
    if (!error_.empty()) return fail_now();
    Node n = parse_alt();
    if (error_.empty() && pos_ < cps_.size()) fail("unbalanced ')'");
    if (!error_.empty()) return fail_now();
    return n;
  }

 private:
  Status fail_now() const {
    return invalid_argument_error(fmt::format("pre-tokenizer pattern '{}': {}", pattern_, error_));
  }
  void fail(std::string_view what) {
    if (error_.empty()) error_ = fmt::format("{} at code point {}", what, pos_);
  }
  bool at_end() const { return pos_ >= cps_.size() || !error_.empty(); }
  char32_t peek(size_t k = 0) const { return pos_ + k < cps_.size() ? cps_[pos_ + k] : 0; }
  bool eat(char32_t c) {
    if (!at_end() && peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Node parse_alt() {
    Node alt{Node::kAlt};
    alt.kids.push_back(parse_seq());
    while (eat('|')) alt.kids.push_back(parse_seq());
    return alt.kids.size() == 1 ? std::move(alt.kids[0]) : std::move(alt);
  }

  Node parse_seq() {
    Node seq{Node::kSeq};
    while (!at_end() && peek() != '|' && peek() != ')') seq.kids.push_back(parse_term());
    fold_lookahead_sets(seq.kids);
    if (seq.kids.empty()) return Node{Node::kEmpty};
    return seq.kids.size() == 1 ? std::move(seq.kids[0]) : std::move(seq);
  }

  // (?=[A])[B] consumes one symbol in both A and B: replace it by the set A∩B,
  // so a repeated group of that shape becomes a plain run.
  static void fold_lookahead_sets(std::vector<Node>& kids) {
    for (size_t i = 0; i + 1 < kids.size();) {
      Node& look = kids[i];
      if (look.kind == Node::kLook && look.kids[0].kind == Node::kSet && kids[i + 1].kind == Node::kSet) {
        kids[i + 1].set.intersect(look.kids[0].set);
        kids.erase(kids.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }

  Node parse_term() {
    Node atom = parse_atom();
    if (at_end()) return atom;
    uint32_t min = 0, max = 0;
    const char32_t c = peek();
    if (c == '*') {
      min = 0, max = kUnbounded;
    } else if (c == '+') {
      min = 1, max = kUnbounded;
    } else if (c == '?') {
      min = 0, max = 1;
    } else if (c == '{') {
      if (!parse_braces(min, max)) return atom;
    } else {
      return atom;
    }
    if (c != '{') ++pos_;
    if (peek() == '?' || peek() == '+') fail("lazy and possessive quantifiers are not supported");
    if (atom.kind != Node::kSet && atom.kind != Node::kSeq && atom.kind != Node::kAlt &&
        atom.kind != Node::kRepeat) {
      fail("quantifier after an assertion or an empty group");
    }
    if (max == kUnbounded && min_length(atom) == 0) fail("a repeated group that can match the empty string");
    Node rep{Node::kRepeat};
    rep.min = min;
    rep.max = max;
    rep.kids.push_back(std::move(atom));
    return rep;
  }

  // {n} {n,} {n,m}; false (nothing consumed) if the text is not a quantifier.
  bool parse_braces(uint32_t& min, uint32_t& max) {
    size_t p = pos_ + 1;
    auto number = [&](uint32_t& v) {
      const size_t start = p;
      v = 0;
      while (p < cps_.size() && cps_[p] >= '0' && cps_[p] <= '9' && v < 100000) v = v * 10 + (cps_[p++] - '0');
      return p > start;
    };
    if (!number(min)) return false;
    max = min;
    if (p < cps_.size() && cps_[p] == ',') {
      ++p;
      if (!number(max)) max = kUnbounded;
    }
    if (p >= cps_.size() || cps_[p] != '}') return false;
    if (max < min) {
      fail("quantifier {n,m} with m < n");
      return false;
    }
    pos_ = p + 1;
    return true;
  }

  static uint32_t min_length(const Node& n) {
    switch (n.kind) {
      case Node::kSet:
        return 1;
      case Node::kSeq: {
        uint32_t s = 0;
        for (const Node& k : n.kids) s += min_length(k);
        return s;
      }
      case Node::kAlt: {
        uint32_t m = kUnbounded;
        for (const Node& k : n.kids) m = std::min(m, min_length(k));
        return m;
      }
      case Node::kRepeat:
        return n.min * min_length(n.kids[0]);
      default:
        return 0;
    }
  }

  Node parse_atom() {
    const char32_t c = peek();
    ++pos_;
    switch (c) {
      case '(':
        return parse_group();
      case '[':
        return set_node(parse_class());
      case '.': {
        SymbolSet s;
        s.add('\n', '\n');
        s.add('\r', '\r');
        return set_node(complemented(s));
      }
      case '^':
        return Node{Node::kBegin};
      case '$':
        return Node{Node::kEnd};
      case '\\':
        return parse_escape_atom();
      case '*': case '+': case '?': case '{': case ')': case ']': case '}': case '|':
        fail(fmt::format("unexpected '{}'", static_cast<char>(c)));
        return Node{};
      default:
        return set_node(literal(c));
    }
  }

  Node parse_group() {
    Node::Kind kind = Node::kSeq;  // plain or non-capturing group
    const bool saved_icase = icase_;
    if (eat('?')) {
      if (eat(':')) {
      } else if (eat('=')) {
        kind = Node::kLook;
      } else if (eat('!')) {
        kind = Node::kNotLook;
      } else if (eat('i') && eat(':')) {
        icase_ = true;
      } else {
        fail("unsupported group kind");
      }
    }
    Node body = parse_alt();
    icase_ = saved_icase;
    if (!eat(')')) fail("missing ')'");
    if (kind == Node::kSeq) return body;
    Node look{kind};
    look.kids.push_back(std::move(body));
    return look;
  }

  Node parse_escape_atom() {
    const char32_t c = peek();
    if (c == 'b' || c == 'B') {
      ++pos_;
      return Node{c == 'b' ? Node::kWordB : Node::kNotWordB};
    }
    return set_node(parse_escape(false).set);
  }

  // What follows a backslash: a class escape (a set) or one character.
  struct Escape {
    SymbolSet set;
    char32_t ch = 0;
    bool single = false;  // stands for the one character `ch`
  };

  Escape character(char32_t c) {
    Escape e;
    e.set = literal(c);
    e.ch = c;
    e.single = true;
    return e;
  }

  // `in_class`: \b is a backspace there.
  Escape parse_escape(bool in_class) {
    if (at_end()) {
      fail("pattern ends with '\\'");
      return {};
    }
    const char32_t c = cps_[pos_++];
    switch (c) {
      case 's': return {space_set()};
      case 'S': return {complemented(space_set())};
      case 'd': return {digit_set()};
      case 'D': return {complemented(digit_set())};
      case 'w': return {word_set()};
      case 'W': return {complemented(word_set())};
      case 'p': return {parse_property()};
      case 'r': return character('\r');
      case 'n': return character('\n');
      case 't': return character('\t');
      case 'v': return character('\v');
      case 'f': return character('\f');
      case 'u': return character(parse_code_point());
      case 'b':
        if (in_class) return character('\b');
        break;
      default:
        if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
          return character(c);
        }
        break;
    }
    fail("unsupported escape");
    return {};
  }

  // After "\u": HHHH or {H...} (at most U+10FFFF).
  char32_t parse_code_point() {
    const bool braces = eat('{');
    uint32_t v = 0;
    int digits = 0;
    while (!at_end() && (braces || digits < 4)) {
      const char32_t h = peek();
      const int d = (h >= '0' && h <= '9') ? int(h - '0')
                    : (h >= 'A' && h <= 'F') ? int(h - 'A' + 10)
                    : (h >= 'a' && h <= 'f') ? int(h - 'a' + 10)
                                             : -1;
      if (d < 0) break;
      v = v * 16 + static_cast<uint32_t>(d);
      ++digits;
      ++pos_;
      if (v > 0x10FFFF) break;
    }
    if ((braces && (!eat('}') || digits == 0)) || (!braces && digits != 4) || v > 0x10FFFF) {
      fail("malformed \\u escape");
      return 0;
    }
    return v;
  }

  SymbolSet parse_class() {
    const bool negate = eat('^');
    SymbolSet s;
    bool closed = false;
    while (!at_end()) {
      if (eat(']')) {
        closed = true;
        break;
      }
      Escape lo = class_atom();
      if (lo.single && peek() == '-' && pos_ + 1 < cps_.size() && cps_[pos_ + 1] != ']') {
        ++pos_;
        const Escape hi = class_atom();
        if (!hi.single) fail("a class escape cannot end a range");
        if (hi.ch < lo.ch) fail("class range out of order");
        lo.set = SymbolSet{};
        lo.set.add(lo.ch, hi.ch);
        add_case_variants(lo.set, lo.ch, hi.ch);
      }
      s.add(lo.set);
    }
    if (!closed) fail("missing ']'");
    if (negate) s.complement();
    return s;
  }

  // One member of a class: an escape or a literal character.
  Escape class_atom() {
    if (at_end()) return {};
    if (eat('\\')) return parse_escape(true);
    return character(cps_[pos_++]);
  }

  // \p{X}, categories mode only.
  SymbolSet parse_property() {
    std::string name;
    if (!eat('{')) fail("'\\p' without '{'");
    while (!at_end() && peek() != '}') name.push_back(static_cast<char>(cps_[pos_++]));
    if (!eat('}')) fail("'\\p{' without '}'");
    if (name == "L" || name == "Lu" || name == "Ll" || name == "Lt" || name == "Lm" || name == "Lo") {
      return category_set(kCpLetter, 0xD2);
    }
    if (name == "N") return category_set(kCpNumber, 0xD1);
    if (name == "P") return category_set(kCpPunct, 0xD3);
    if (name == "M") return category_set(kCpMark, 0xD4);
    if (name == "S") return category_set(kCpSymbol, 0xD5);
    fail(fmt::format("unsupported property \\p{{{}}}", name));
    return {};
  }

  SymbolSet literal(char32_t c) {
    if (mode_ == SymbolMode::categories && c >= 0x80) {
      fail("a non-ASCII literal in a pattern with \\p{...} (llama.cpp refuses the mix)");
    }
    SymbolSet s = single(c);
    add_case_variants(s, c, c);
    return s;
  }

  void add_case_variants(SymbolSet& s, char32_t lo, char32_t hi) const {
    if (!icase_) return;
    for (char32_t c = lo; c <= hi && c < 0x80; ++c) {
      if (c >= 'a' && c <= 'z') s.add(c - 32, c - 32);
      if (c >= 'A' && c <= 'Z') s.add(c + 32, c + 32);
    }
  }

  static Node set_node(SymbolSet s) {
    Node n{Node::kSet};
    n.set = std::move(s);
    return n;
  }

  std::string_view pattern_;
  std::vector<char32_t> cps_;
  size_t pos_ = 0;
  bool icase_ = false;
  SymbolMode mode_;
  std::string error_;
};

}  // namespace

Result<Parsed> parse(std::string_view pattern) {
  Parser parser(pattern);
  LES_ASSIGN_OR_RETURN(Node root, parser.parse());
  return Parsed{std::move(root), parser.mode()};
}

}  // namespace les::regex_tree
