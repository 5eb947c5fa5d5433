#include "core/tokenizer/pre_tokenizer.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "core/tokenizer/unicode_class.h"
#include "core/tokenizer/utf8.h"

namespace les {

namespace {

// ---------------------------------------------------------------------------
// Character classes

bool is_l(const CodePoint& c) { return (c.flags & kCpLetter) != 0; }
bool is_n(const CodePoint& c) { return (c.flags & kCpNumber) != 0; }
bool is_p(const CodePoint& c) { return (c.flags & kCpPunct) != 0; }
bool is_ws(const CodePoint& c) { return (c.flags & kCpWhitespace) != 0; }
bool is_crlf(const CodePoint& c) { return c.cp == '\r' || c.cp == '\n'; }
// [^\s\p{L}\p{N}]
bool is_other(const CodePoint& c) { return (c.flags & (kCpLetter | kCpNumber | kCpWhitespace)) == 0; }

uint32_t classify(char32_t cp, bool valid) { return valid ? unicode_class(cp) : 0; }

struct Range {
  char32_t lo, hi;
};

bool in_ranges(char32_t c, const Range* r, size_t n) {
  // Ranges are sorted by lo and disjoint.
  const Range* end = r + n;
  const Range* it = std::upper_bound(r, end, c, [](char32_t v, const Range& x) { return v < x.lo; });
  return it != r && c <= std::prev(it)->hi;
}

// deepseek-llm's letter class: the cased letters (Lu, Ll, Lt) of the Unicode
// version the DeepSeek tokenizer was made with, as ranges (sorted).
constexpr Range kDeepseekLetters[] = {
    {0x0041, 0x005A},   {0x0061, 0x007A},   {0x00B5, 0x00B5},   {0x00C0, 0x00D6},   {0x00D8, 0x00F6},
    {0x00F8, 0x01BA},   {0x01BC, 0x01BF},   {0x01C4, 0x0293},   {0x0295, 0x02AF},   {0x0370, 0x0373},
    {0x0376, 0x0377},   {0x037B, 0x037D},   {0x037F, 0x037F},   {0x0386, 0x0386},   {0x0388, 0x038A},
    {0x038C, 0x038C},   {0x038E, 0x03A1},   {0x03A3, 0x03F5},   {0x03F7, 0x0481},   {0x048A, 0x052F},
    {0x0531, 0x0556},   {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},   {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},   {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},   {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B},   {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},   {0x1FD6, 0x1FDB},
    {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},   {0x2102, 0x2102},   {0x2107, 0x2107},
    {0x210A, 0x2113},   {0x2115, 0x2115},   {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},
    {0x2128, 0x2128},   {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},   {0x2C7E, 0x2CE4},
    {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},   {0xA680, 0xA69B},   {0xA722, 0xA76F},
    {0xA771, 0xA787},   {0xA78B, 0xA78E},   {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},
    {0xFF21, 0xFF3A},   {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

// deepseek-llm's punctuation class [!-/:-~！-／：-～‘-‟　-。] (sorted).
constexpr Range kDeepseekPunct[] = {
    {0x0021, 0x002F}, {0x003A, 0x007E}, {0x2018, 0x201F}, {0x3000, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};

// [一-龥ࠀ-一가-퟿] = U+4E00..U+9FA5, U+0800..U+4E00, U+AC00..U+D7FF (merged, sorted).
constexpr Range kDeepseekCjk[] = {{0x0800, 0x9FA5}, {0xAC00, 0xD7FF}};

bool ds_letter(const CodePoint& c) { return in_ranges(c.cp, kDeepseekLetters, std::size(kDeepseekLetters)); }
bool ds_punct(const CodePoint& c) { return in_ranges(c.cp, kDeepseekPunct, std::size(kDeepseekPunct)); }
bool ds_cjk(const CodePoint& c) { return in_ranges(c.cp, kDeepseekCjk, std::size(kDeepseekCjk)); }

// [\p{P}$+<=>^~|`]
bool falcon_punct(const CodePoint& c) {
  if (is_p(c)) return true;
  switch (c.cp) {
    case '$': case '+': case '<': case '=': case '>': case '^': case '~': case '|': case '`':
      return true;
    default:
      return false;
  }
}

// [\p{P}$+<=>^~|] (llama.cpp's default pre-tokenizer; falcon's class without the backtick)
bool default_punct(const CodePoint& c) { return c.cp != '`' && falcon_punct(c); }

// ---------------------------------------------------------------------------
// Building blocks

// Length of the run of `pred` starting at pos.
template <typename Pred>
size_t run(const CodePoint* s, size_t n, size_t pos, Pred pred) {
  size_t k = pos;
  while (k < n && pred(s[k])) ++k;
  return k - pos;
}

// `pre? cls+`: an optional single char matching `pre`, then a run of `cls`.
template <typename Pre, typename Cls>
size_t opt_then_run(const CodePoint* s, size_t n, size_t pos, Pre pre, Cls cls) {
  if (pre(s[pos]) && pos + 1 < n && cls(s[pos + 1])) return 1 + run(s, n, pos + 1, cls);
  return run(s, n, pos, cls);
}

char32_t ascii_lower(char32_t c, bool fold) { return (fold && c >= 'A' && c <= 'Z') ? c + 32 : c; }

// 's|'t|'re|'ve|'m|'ll|'d, optionally case-insensitive.
size_t contraction(const CodePoint* s, size_t n, size_t pos, bool fold) {
  if (s[pos].cp != '\'' || pos + 1 >= n) return 0;
  const char32_t a = ascii_lower(s[pos + 1].cp, fold);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= n) return 0;
  const char32_t b = ascii_lower(s[pos + 2].cp, fold);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

bool is_space_char(const CodePoint& c) { return c.cp == ' '; }

// \s+(?!\S)|\s+ : a whitespace run keeps its last char for the next piece
// when a non-space follows (so " word" stays together).
size_t trailing_ws(const CodePoint* s, size_t n, size_t pos) {
  const size_t len = run(s, n, pos, is_ws);
  if (len == 0) return 0;
  if (pos + len == n || len == 1) return len;
  return len - 1;
}

// ---------------------------------------------------------------------------
// Stages

size_t match_gpt2(const CodePoint* s, size_t n, size_t pos) {
  if (size_t m = contraction(s, n, pos, false)) return m;
  if (size_t m = opt_then_run(s, n, pos, is_space_char, is_l)) return m;
  if (size_t m = opt_then_run(s, n, pos, is_space_char, is_n)) return m;
  if (size_t m = opt_then_run(s, n, pos, is_space_char, is_other)) return m;
  return trailing_ws(s, n, pos);
}

// llama3 / qwen2 shared part; `max_digits` is 3 (llama3) or 1 (qwen2).
size_t match_llama3_like(const CodePoint* s, size_t n, size_t pos, size_t max_digits) {
  if (size_t m = contraction(s, n, pos, true)) return m;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  const auto not_crlf_l_n = [](const CodePoint& c) { return !is_crlf(c) && !is_l(c) && !is_n(c); };
  if (size_t m = opt_then_run(s, n, pos, not_crlf_l_n, is_l)) return m;
  // \p{N}{1,max}
  if (is_n(s[pos])) return std::min(max_digits, run(s, n, pos, is_n));
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  if (size_t m = opt_then_run(s, n, pos, is_space_char, is_other)) return m + run(s, n, pos + m, is_crlf);
  // \s*[\r\n]+ : the whitespace run up to and including its last \r or \n.
  const size_t ws = run(s, n, pos, is_ws);
  for (size_t k = ws; k > 0; --k) {
    if (is_crlf(s[pos + k - 1])) return k;
  }
  return trailing_ws(s, n, pos);
}

size_t match_llama3(const CodePoint* s, size_t n, size_t pos) { return match_llama3_like(s, n, pos, 3); }
size_t match_qwen2(const CodePoint* s, size_t n, size_t pos) { return match_llama3_like(s, n, pos, 1); }

// [\r\n]
size_t match_crlf(const CodePoint* s, size_t, size_t pos) { return is_crlf(s[pos]) ? 1 : 0; }
// \p{N}
size_t match_digit(const CodePoint* s, size_t, size_t pos) { return is_n(s[pos]) ? 1 : 0; }
// \p{N}+
size_t match_digits(const CodePoint* s, size_t n, size_t pos) { return run(s, n, pos, is_n); }
// [0-9][0-9][0-9]
size_t match_ascii_digits3(const CodePoint* s, size_t n, size_t pos) {
  if (pos + 3 > n) return 0;
  for (size_t k = pos; k < pos + 3; ++k) {
    if (s[k].cp < '0' || s[k].cp > '9') return 0;
  }
  return 3;
}
// [\p{P}$+<=>^~|`]+
size_t match_falcon_punct(const CodePoint* s, size_t n, size_t pos) { return run(s, n, pos, falcon_punct); }
// [\p{P}$+<=>^~|]+
size_t match_default_punct(const CodePoint* s, size_t n, size_t pos) { return run(s, n, pos, default_punct); }
// \s?[cased letters]+
size_t match_ds_letters(const CodePoint* s, size_t n, size_t pos) { return opt_then_run(s, n, pos, is_ws, ds_letter); }
// \s?[!-/:-~...]+
size_t match_ds_punct(const CodePoint* s, size_t n, size_t pos) { return opt_then_run(s, n, pos, is_ws, ds_punct); }
// \s+$
size_t match_ws_at_end(const CodePoint* s, size_t n, size_t pos) {
  const size_t len = run(s, n, pos, is_ws);
  return (len > 0 && pos + len == n) ? len : 0;
}
// [一-龥ࠀ-一가-퟿]+
size_t match_ds_cjk(const CodePoint* s, size_t n, size_t pos) { return run(s, n, pos, ds_cjk); }
// \s?\p{L}+
size_t match_ws_letters(const CodePoint* s, size_t n, size_t pos) { return opt_then_run(s, n, pos, is_ws, is_l); }
// \s?\p{P}+
size_t match_ws_punct(const CodePoint* s, size_t n, size_t pos) { return opt_then_run(s, n, pos, is_ws, is_p); }

struct Definition {
  const char* name;
  std::vector<SplitMatcher> stages;
  bool ignore_merges;
};

const std::vector<Definition>& definitions() {
  static const std::vector<Definition> defs = {
      {"default", {match_default_punct, match_gpt2, match_digits, match_ascii_digits3}, false},
      {"gpt-2", {match_gpt2}, false},
      {"gpt2", {match_gpt2}, false},
      {"mpt", {match_gpt2}, false},
      {"llama3", {match_llama3}, true},
      {"llama-bpe", {match_llama3}, true},
      {"qwen2", {match_qwen2}, false},
      {"starcoder", {match_digit, match_gpt2}, false},
      {"refact", {match_digit, match_gpt2}, false},
      {"falcon", {match_falcon_punct, match_gpt2, match_ascii_digits3}, false},
      {"deepseek-llm",
       {match_crlf, match_ds_letters, match_ds_punct, match_ws_at_end, match_ds_cjk, match_digits},
       false},
      {"deepseek-coder", {match_crlf, match_ws_letters, match_ws_punct, match_ds_cjk, match_digit}, false},
  };
  return defs;
}

// Applies one stage to every piece [b, e) of `pieces` (code point indices).
void apply_stage(SplitMatcher m, const std::vector<CodePoint>& cps, std::vector<std::pair<size_t, size_t>>& pieces) {
  std::vector<std::pair<size_t, size_t>> out;
  out.reserve(pieces.size() * 2);
  for (const auto& [b, e] : pieces) {
    const CodePoint* s = cps.data() + b;
    const size_t n = e - b;
    size_t gap = 0;
    for (size_t pos = 0; pos < n;) {
      const size_t len = m(s, n, pos);
      if (len == 0) {
        ++pos;
        continue;
      }
      if (pos > gap) out.emplace_back(b + gap, b + pos);
      out.emplace_back(b + pos, b + pos + len);
      pos += len;
      gap = pos;
    }
    if (gap < n) out.emplace_back(b + gap, e);
  }
  pieces.swap(out);
}

}  // namespace

Result<PreTokenizer> PreTokenizer::create(std::string_view name) {
  for (const Definition& d : definitions()) {
    if (name == d.name) {
      PreTokenizer p;
      p.name_ = d.name;
      p.stages_ = d.stages;
      p.ignore_merges_ = d.ignore_merges;
      return p;
    }
  }
  std::string known;
  for (const Definition& d : definitions()) {
    if (!known.empty()) known += ", ";
    known += d.name;
  }
  return unsupported_error(fmt::format("BPE pre-tokenizer '{}' (tokenizer.ggml.pre) is not supported (supported: {})",
                                       name, known));
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<CodePoint> cps;
  cps.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const utf8::Decoded d = utf8::decode(text, i);
    cps.push_back({d.cp, classify(d.cp, d.valid), static_cast<uint32_t>(i)});
    i += d.len;
  }
  std::vector<std::pair<size_t, size_t>> pieces;
  if (!cps.empty()) pieces.emplace_back(0, cps.size());
  for (const SplitMatcher m : stages_) apply_stage(m, cps, pieces);

  std::vector<std::string_view> out;
  out.reserve(pieces.size());
  for (const auto& [b, e] : pieces) {
    const size_t from = cps[b].byte_off;
    const size_t to = e < cps.size() ? cps[e].byte_off : text.size();
    out.push_back(text.substr(from, to - from));
  }
  return out;
}

}  // namespace les
