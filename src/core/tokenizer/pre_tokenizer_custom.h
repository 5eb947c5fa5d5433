// The pre-tokenizer stages llama.cpp (81ff7abe, src/unicode.cpp) runs as
// hand-written code instead of std::regex, reimplemented with their exact
// behaviour, which in places is not that of the pattern they stand for:
//
//   gpt2    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   llama3  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//           | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2   llama3 with \p{N} (one digit per piece)
//   qwen35  qwen2 with [\p{L}\p{M}]+ for the letter runs and [^\s\p{L}\p{M}\p{N}]
//           for the symbol runs (combining marks stay with their letters)
//   kimi-k2 Han runs (CJK ideograph blocks, unicode_cpt_is_han's ranges); then
//           an optional non-letter non-number non-newline character, letters
//           other than Han (any case: the Lu/Ll split of Kimi's pattern is not
//           made, and marks are not letters), an optional contraction; then
//           llama3's \p{N}{1,3}, symbol and whitespace alternatives
//   digit groups (afmoe's \p{AFMoE_digits}, tiny_aya's \d{1,3}(?=(?:\d{3})*\b)):
//           each run of \p{N} is cut into groups of three from the right; the
//           text before a run is not a piece of its own but is prefixed to the
//           run's first group (llama.cpp's behaviour, kept for exactness)
//   newline runs  [^\n]+|[\n]+ (gemma4, sarvam-moe)
//
// Classes come from unicode_class() (utf8proc). The text is the current piece:
// lookaheads and "end" stop at its end.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace les {

// One decoded code point of the text being split, with its category flags.
struct CodePoint {
  char32_t cp;
  uint32_t flags;     // kCpLetter | kCpNumber | ... (unicode_class.h)
  uint32_t byte_off;  // offset of its first byte in the text
};

// A hand-written stage: appends the pieces of s[0, n) to `out` as
// [base + begin, base + end) code point ranges that concatenate to [base, base + n).
using CustomSplit = void (*)(const CodePoint* s, uint32_t n, uint32_t base,
                             std::vector<std::pair<uint32_t, uint32_t>>& out);

void split_gpt2(const CodePoint* s, uint32_t n, uint32_t base, std::vector<std::pair<uint32_t, uint32_t>>& out);
void split_llama3(const CodePoint* s, uint32_t n, uint32_t base, std::vector<std::pair<uint32_t, uint32_t>>& out);
void split_qwen2(const CodePoint* s, uint32_t n, uint32_t base, std::vector<std::pair<uint32_t, uint32_t>>& out);
void split_qwen35(const CodePoint* s, uint32_t n, uint32_t base, std::vector<std::pair<uint32_t, uint32_t>>& out);
void split_kimi_k2(const CodePoint* s, uint32_t n, uint32_t base, std::vector<std::pair<uint32_t, uint32_t>>& out);
void split_digit_groups(const CodePoint* s, uint32_t n, uint32_t base,
                        std::vector<std::pair<uint32_t, uint32_t>>& out);
void split_newline_runs(const CodePoint* s, uint32_t n, uint32_t base,
                        std::vector<std::pair<uint32_t, uint32_t>>& out);

}  // namespace les
