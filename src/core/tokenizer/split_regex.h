// SplitRegex: one regular expression of a pre-tokenizer, matched the way
// llama.cpp (81ff7abe, src/unicode.cpp) matches the ones it hands to std::regex,
// so that LES splits text exactly where llama.cpp does.
//
// Matching semantics are those of ECMAScript (ECMA-262 §22.2, the grammar
// std::regex uses by default): the leftmost match wins; alternatives are tried
// in order and the first that lets the whole pattern match is taken (not the
// longest); quantifiers are greedy and give back one repetition at a time
// when the rest fails; lookaheads (?=..) (?!..) are atomic.
//
// Text is not matched as code points but as "symbols", the two ways llama.cpp
// presents it to std::regex (SymbolMode below). In categories mode \p{L},
// \p{Lu}, \p{Ll}, \p{Lt}, \p{Lm}, \p{Lo} all stand for every letter (llama.cpp
// replaces each by one letter byte; the case distinctions of the model's
// tokenizer.json are gone), and \p{S} leaves out U+007E '~' (llama.cpp's ASCII
// list for symbols omits it; utf8proc's categories give the rest).
//
// Syntax accepted (the subset the pre-tokenizers use; anything else is refused
// by compile()): literals (UTF-8), '.', classes [...] / [^...] with ranges and
// the escapes below, groups (...) (?:...), lookaheads (?=...) (?!...),
// case-insensitive groups (?i:...) (ASCII letters only), alternation |,
// quantifiers * + ? {n} {n,} {n,m} (greedy only), anchors ^ $ \b \B, escapes
// \s \S \d \D \w \W \p{X} \r \n \t \v \f \uHHHH \u{H..} (\b in a class is
// U+0008) and a backslash before any ASCII punctuation. A quantified group that could repeat without consuming text is
// refused (no pattern needs it, and it could loop).
//
// Cost: backtracking over an explicit heap stack (no recursion per character,
// so long inputs cannot overflow the C++ stack); time is linear in the text for
// the pre-tokenizers' patterns except for runs a pattern retries from every
// start position (e.g. \s+$ on a long whitespace run inside a piece: quadratic
// in that run, as in llama.cpp).
//
// Thread-safety: immutable after compile(); split() and match_at() are const and
// reentrant (they use caller-provided scratch).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace les {

// How code points become symbols (llama.cpp's unicode_regex_split):
enum class SymbolMode : uint8_t {
  // The pattern uses \p{...}: a code point below U+0080 is itself; any other is
  // one byte naming its class: 0x0B White_Space, 0xD1 \p{N}, 0xD2 \p{L},
  // 0xD3 \p{P}, 0xD4 \p{M}, 0xD5 \p{S}, 0xD0 anything else.
  categories,
  // No \p{...}: code points as they are, except that non-ASCII White_Space
  // becomes U+000B (so that \s, which is ASCII-only here, matches it).
  code_points,
};

// The symbol of a code point with unicode_class() flags `flags` in `mode`.
uint32_t regex_symbol(char32_t cp, uint32_t flags, SymbolMode mode) noexcept;

// A set of symbols: a bitmap for 0..255 and sorted disjoint ranges above.
class SymbolSet {
 public:
  bool has(uint32_t s) const noexcept {
    return s < 256 ? ((low_[s >> 6] >> (s & 63)) & 1u) != 0 : has_high(s);
  }
  void add(uint32_t lo, uint32_t hi);  // inclusive; hi <= 0x10FFFF
  void add(const SymbolSet& other);
  void complement();                   // within 0..0x10FFFF
  void intersect(const SymbolSet& other);
  bool operator==(const SymbolSet& o) const { return low_ == o.low_ && high_ == o.high_; }

 private:
  bool has_high(uint32_t s) const noexcept;
  std::array<uint64_t, 4> low_{};
  std::vector<std::pair<uint32_t, uint32_t>> high_;  // inclusive ranges, each >= 256
};

class SplitRegex {
 public:
  // One piece of a split: [begin, end) in symbol indices.
  using Span = std::pair<uint32_t, uint32_t>;
  // Backtracking scratch, reusable across calls by one thread.
  struct Frame {
    uint32_t pc;     // instruction to resume at (kRun frames: the run instruction)
    uint32_t pos;    // text position to resume at (kRun frames: where the run began)
    uint32_t count;  // kRun frames: the run length tried last; 0 for alternatives
  };
  using Scratch = std::vector<Frame>;

  // Errors: invalid_argument naming the pattern and the offending position.
  static Result<SplitRegex> compile(std::string_view pattern);

  const std::string& pattern() const noexcept { return pattern_; }
  SymbolMode mode() const noexcept { return mode_; }

  // The end of the match that starts at `start` in s[0, n), or kNoMatch.
  // With `nonempty` an empty match is not accepted (matching continues).
  static constexpr uint32_t kNoMatch = UINT32_MAX;
  uint32_t match_at(const uint32_t* s, uint32_t n, uint32_t start, bool nonempty, Scratch& scratch) const;

  // std::regex_iterator over s[0, n), "isolated" split: appends to `out` (offset
  // by `base`) each match and each stretch of text between matches, in order.
  // Empty matches add nothing. Pieces concatenate to [base, base + n).
  void split(const uint32_t* s, uint32_t n, uint32_t base, std::vector<Span>& out, Scratch& scratch) const;

  enum class Op : uint8_t;
  struct Inst;

 private:
  uint32_t run(uint32_t pc, const uint32_t* s, uint32_t n, uint32_t pos, uint32_t reject_at,
               Scratch& scratch) const;
  bool word_at(const uint32_t* s, uint32_t n, uint32_t pos) const noexcept;

  std::string pattern_;
  SymbolMode mode_ = SymbolMode::code_points;
  std::vector<Inst> prog_;
  std::vector<SymbolSet> sets_;
  SymbolSet first_;          // symbols a non-empty match can start with
  bool any_start_ = true;    // true: every position must be tried (first_ unused)
  friend class RegexCompiler;
};

// The program's instructions (exposed for split_regex_compile.cpp).
enum class SplitRegex::Op : uint8_t {
  kSet,       // one symbol in sets_[a]
  kRun,       // min..max symbols in sets_[a], greedy
  kSplit,     // try pc a, then pc b
  kJmp,       // go to a
  kLook,      // lookahead: sub-program at pc+1 must match here; continue at b
  kNotLook,   // negative lookahead: sub-program at pc+1 must not match; continue at b
  kBegin,     // ^ : position 0
  kEnd,       // $ : position n
  kWordB,     // \b
  kNotWordB,  // \B
  kMatch,
};

struct SplitRegex::Inst {
  Op op;
  uint32_t a = 0, b = 0;
  uint32_t min = 0, max = 0;
};

}  // namespace les
