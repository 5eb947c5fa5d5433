#include "core/tokenizer/pre_tokenizer_custom.h"

#include <algorithm>

#include "core/tokenizer/unicode_class.h"

namespace les {

namespace {

using Spans = std::vector<std::pair<uint32_t, uint32_t>>;

bool is_l(const CodePoint& c) { return (c.flags & kCpLetter) != 0; }
bool is_n(const CodePoint& c) { return (c.flags & kCpNumber) != 0; }
bool is_ws(const CodePoint& c) { return (c.flags & kCpWhitespace) != 0; }
bool is_crlf(const CodePoint& c) { return c.cp == '\r' || c.cp == '\n'; }
bool is_lm(const CodePoint& c) { return (c.flags & (kCpLetter | kCpMark)) != 0; }
// [^\s\p{L}\p{N}]
bool is_other(const CodePoint& c) { return (c.flags & (kCpLetter | kCpNumber | kCpWhitespace)) == 0; }
// [^\s\p{L}\p{M}\p{N}]
bool is_other_no_mark(const CodePoint& c) {
  return (c.flags & (kCpLetter | kCpMark | kCpNumber | kCpWhitespace)) == 0;
}
// [^\r\n\p{L}\p{N}]
bool is_letter_prefix(const CodePoint& c) { return !is_crlf(c) && !is_l(c) && !is_n(c); }
bool is_space_char(const CodePoint& c) { return c.cp == ' '; }

// The CJK ideograph blocks of Blocks.txt that llama.cpp counts as Han for
// Kimi-K2: the unified block, extensions A to F, and both compatibility blocks
// (extensions G, H and I are not among them).
bool is_han(const CodePoint& c) {
  const char32_t x = c.cp;
  if (x < 0x3400) return false;
  return (x <= 0x4DBF) || (x >= 0x4E00 && x <= 0x9FFF) || (x >= 0xF900 && x <= 0xFAFF) ||
         (x >= 0x20000 && x <= 0x2A6DF) || (x >= 0x2A700 && x <= 0x2EBEF) || (x >= 0x2F800 && x <= 0x2FA1F);
}
bool is_letter_not_han(const CodePoint& c) { return is_l(c) && !is_han(c); }

template <typename Pred>
uint32_t run(const CodePoint* s, uint32_t n, uint32_t pos, Pred pred) {
  uint32_t k = pos;
  while (k < n && pred(s[k])) ++k;
  return k - pos;
}

// `pre? cls+`: an optional character matching `pre`, then a run of `cls`.
template <typename Pre, typename Cls>
uint32_t opt_then_run(const CodePoint* s, uint32_t n, uint32_t pos, Pre pre, Cls cls) {
  if (pre(s[pos]) && pos + 1 < n && cls(s[pos + 1])) return 1 + run(s, n, pos + 1, cls);
  return run(s, n, pos, cls);
}

char32_t lower(char32_t c, bool fold) { return fold ? unicode_to_lower(c) : c; }

// 's|'t|'re|'ve|'m|'ll|'d at pos (case-insensitive with `fold`): its length or 0.
uint32_t contraction(const CodePoint* s, uint32_t n, uint32_t pos, bool fold) {
  if (s[pos].cp != '\'' || pos + 1 >= n) return 0;
  const char32_t a = lower(s[pos + 1].cp, fold);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= n) return 0;
  const char32_t b = lower(s[pos + 2].cp, fold);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// \s+(?!\S)|\s+ : a whitespace run keeps its last character for the next piece
// when a non-space follows (so " word" stays together).
uint32_t trailing_ws(const CodePoint* s, uint32_t n, uint32_t pos) {
  const uint32_t len = run(s, n, pos, is_ws);
  if (len == 0) return 0;
  if (pos + len == n || len == 1) return len;
  return len - 1;
}

// \s*[\r\n]+|\s+(?!\S)|\s+ : the whitespace run up to its last \r or \n if it
// has one, else trailing_ws.
uint32_t newline_or_trailing_ws(const CodePoint* s, uint32_t n, uint32_t pos) {
  const uint32_t ws = run(s, n, pos, is_ws);
  for (uint32_t k = ws; k > 0; --k) {
    if (is_crlf(s[pos + k - 1])) return k;
  }
  return trailing_ws(s, n, pos);
}

// Applies a matcher (the length of the piece starting at pos, >= 1) to s[0, n).
template <typename Matcher>
void split_with(const CodePoint* s, uint32_t n, uint32_t base, Spans& out, Matcher m) {
  for (uint32_t pos = 0; pos < n;) {
    const uint32_t len = std::max<uint32_t>(1, m(s, n, pos));  // 1: a character no alternative takes
    out.emplace_back(base + pos, base + pos + len);
    pos += len;
  }
}

uint32_t match_gpt2(const CodePoint* s, uint32_t n, uint32_t pos) {
  if (uint32_t m = contraction(s, n, pos, false)) return m;
  if (uint32_t m = opt_then_run(s, n, pos, is_space_char, is_l)) return m;
  if (uint32_t m = opt_then_run(s, n, pos, is_space_char, is_n)) return m;
  if (uint32_t m = opt_then_run(s, n, pos, is_space_char, is_other)) return m;
  return trailing_ws(s, n, pos);
}

// llama3 / qwen2 / qwen35: `max_digits` 3 or 1; `marks` puts \p{M} with the letters.
template <uint32_t kMaxDigits, bool kMarks>
uint32_t match_llama3_like(const CodePoint* s, uint32_t n, uint32_t pos) {
  if (uint32_t m = contraction(s, n, pos, true)) return m;
  // [^\r\n\p{L}\p{N}]?\p{L}+   (qwen35: [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+)
  if (uint32_t m = opt_then_run(s, n, pos, is_letter_prefix, kMarks ? is_lm : is_l)) return m;
  // \p{N}{1,max}
  if (is_n(s[pos])) return std::min(kMaxDigits, run(s, n, pos, is_n));
  //  ?[^\s\p{L}\p{N}]+[\r\n]*   (qwen35: without \p{M} too)
  if (uint32_t m = opt_then_run(s, n, pos, is_space_char, kMarks ? is_other_no_mark : is_other)) {
    return m + run(s, n, pos + m, is_crlf);
  }
  return newline_or_trailing_ws(s, n, pos);
}

uint32_t match_kimi_k2(const CodePoint* s, uint32_t n, uint32_t pos) {
  const CodePoint& c = s[pos];
  if (is_han(c)) return run(s, n, pos, is_han);
  // The letter pattern: a letter other than Han here, or a possible leading
  // character (not \r \n, a letter or a number) followed by one.
  const bool lead = !is_crlf(c) && !is_l(c) && !is_n(c);
  if (is_letter_not_han(c) || (lead && pos + 1 < n && is_letter_not_han(s[pos + 1]))) {
    uint32_t k = pos + (lead ? 1 : 0);
    k += run(s, n, k, is_letter_not_han);
    if (k < n) k += contraction(s, n, k, true);
    return k - pos;
  }
  if (is_n(c)) return std::min<uint32_t>(3, run(s, n, pos, is_n));
  if (uint32_t m = opt_then_run(s, n, pos, is_space_char, is_other)) return m + run(s, n, pos + m, is_crlf);
  return newline_or_trailing_ws(s, n, pos);
}

}  // namespace

void split_gpt2(const CodePoint* s, uint32_t n, uint32_t base, Spans& out) { split_with(s, n, base, out, match_gpt2); }

void split_llama3(const CodePoint* s, uint32_t n, uint32_t base, Spans& out) {
  split_with(s, n, base, out, match_llama3_like<3, false>);
}

void split_qwen2(const CodePoint* s, uint32_t n, uint32_t base, Spans& out) {
  split_with(s, n, base, out, match_llama3_like<1, false>);
}

void split_qwen35(const CodePoint* s, uint32_t n, uint32_t base, Spans& out) {
  split_with(s, n, base, out, match_llama3_like<1, true>);
}

void split_kimi_k2(const CodePoint* s, uint32_t n, uint32_t base, Spans& out) {
  split_with(s, n, base, out, match_kimi_k2);
}

void split_digit_groups(const CodePoint* s, uint32_t n, uint32_t base, Spans& out) {
  uint32_t emitted = 0;  // end of the last piece
  auto emit = [&](uint32_t end) {
    if (end > emitted) out.emplace_back(base + emitted, base + end);
    emitted = end;
  };
  for (uint32_t pos = 0; pos < n;) {
    if (!is_n(s[pos])) {
      ++pos;
      continue;
    }
    const uint32_t start = pos, len = run(s, n, pos, is_n);
    pos += len;
    // Leading 1 or 2 digits (with the text before the run), then groups of 3.
    uint32_t cur = start + len % 3;
    if (cur > start) emit(cur);
    for (; cur < start + len; cur += 3) emit(cur + 3);
  }
  emit(n);
}

void split_newline_runs(const CodePoint* s, uint32_t n, uint32_t base, Spans& out) {
  for (uint32_t pos = 0; pos < n;) {
    const bool nl = s[pos].cp == '\n';
    const uint32_t len = run(s, n, pos, [nl](const CodePoint& c) { return (c.cp == '\n') == nl; });
    out.emplace_back(base + pos, base + pos + len);
    pos += len;
  }
}

}  // namespace les
