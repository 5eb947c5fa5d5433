// PreTokenizer: splits text into the pieces that byte-level BPE encodes one
// at a time, as named by GGUF `tokenizer.ggml.pre`.
//
// Each pre-tokenizer is a sequence of split stages. A stage finds its matches
// in each piece from left to right (leftmost match, alternatives in the
// regex's order, greedy with the backtracking the regex implies) and
// replaces the piece by the matches and the text between them ("isolated"
// split, as HF `tokenizers` Split and llama.cpp do). Stages are hand-written
// matchers over Unicode code points, classified by unicode_class.h (general
// categories from utf8proc: \p{L} letters, \p{N} numbers, \p{P} punctuation;
// \s = the White_Space property).
// Lookarounds and `$` refer to the end of the current piece.
//
// Supported names and their patterns (from the models' tokenizer.json):
//   gpt-2, gpt2, mpt:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   default:            [\p{P}$+<=>^~|]+ ; then gpt2 ; then \p{N}+ ; then [0-9][0-9][0-9]
//                       (llama.cpp's LLAMA_VOCAB_PRE_TYPE_DEFAULT, used for a GGUF
//                       without tokenizer.ggml.pre: punctuation runs, apostrophes
//                       included, and digit runs in threes are split off first)
//   llama3, llama-bpe:  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//                       | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+   (and ignore_merges)
//   qwen2:              as llama3 with \p{N} (single digits)
//   starcoder, refact:  \p{N} ; then gpt2
//   falcon:             [\p{P}$+<=>^~|`]+ ; then gpt2 ; then [0-9][0-9][0-9]
//   deepseek-llm:       [\r\n] ; \s?[cased letters]+ ; \s?[!-/:-~！-／：-～‘-‟　-。]+ ; \s+$ ;
//                       [一-龥ࠀ-一가-퟿]+ ; \p{N}+
//   deepseek-coder:     [\r\n] ; \s?\p{L}+ ; \s?\p{P}+ ; [一-龥ࠀ-一가-퟿]+ ; \p{N}
// Any other name is refused (StatusCode::unsupported).
//
// Invalid UTF-8 bytes are classified as "other" (not letter, number or
// space) and kept as-is in the pieces.
//
// Thread-safety: immutable after create(); split() is const and reentrant.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/unicode_class.h"
#include "util/status.h"

namespace les {

// One decoded code point of the text being split, with its category flags.
struct CodePoint {
  char32_t cp;
  uint32_t flags;     // kCpLetter | kCpNumber | ... (unicode_class.h)
  uint32_t byte_off;  // offset of its first byte in the text
};

// A split stage: the length in code points of the match starting at `pos` in
// s[0, n), or 0 if the pattern does not match there.
using SplitMatcher = size_t (*)(const CodePoint* s, size_t n, size_t pos);

class PreTokenizer {
 public:
  // Errors: unsupported, naming `name` and listing the supported names.
  static Result<PreTokenizer> create(std::string_view name);

  const std::string& name() const noexcept { return name_; }
  // Whether BPE should emit a piece that is itself a token without merging
  // (HF `ignore_merges`, set for llama3).
  bool ignore_merges() const noexcept { return ignore_merges_; }

  // Splits `text` into non-empty pieces whose concatenation is `text`.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  std::string name_;
  std::vector<SplitMatcher> stages_;
  bool ignore_merges_ = false;
};

}  // namespace les
