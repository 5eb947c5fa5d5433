// PreTokenizer: splits text into the pieces that BPE encodes one at a time, as
// named by GGUF `tokenizer.ggml.pre`, splitting exactly where llama.cpp
// (81ff7abe, llama-vocab.cpp and unicode.cpp) splits.
//
// Every name llama.cpp accepts for a BPE vocabulary is accepted (86 names,
// pre_tokenizer_names.cpp lists them with the model families their converter
// gives them). Each name maps onto one of llama.cpp's pre-tokenizer types: a
// sequence of stages, each of which splits every current piece into its
// matches and the text between them ("isolated" split). A stage is a pattern
// (split_regex.h: llama.cpp's std::regex semantics, \p{..} classes from
// utf8proc through unicode_class.h) or one of the hand-written splitters
// llama.cpp uses instead of a regex for the common patterns
// (pre_tokenizer_custom.h: gpt2, llama3, qwen2, qwen35, kimi-k2, digit groups,
// newline runs). Names also carry the tokenizer settings llama.cpp ties to
// them (PreTokenizerTraits). Any other name is refused (StatusCode::unsupported).
//
// Invalid UTF-8 bytes are classified like U+FFFD (the code point llama.cpp
// replaces them with: a symbol) but are kept as-is in the pieces.
//
// Thread-safety: immutable after create(); split() is const and reentrant.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/pre_tokenizer_custom.h"
#include "core/tokenizer/unicode_class.h"
#include "util/status.h"

namespace les {

class SplitRegex;

// What a pre-tokenizer name implies for the BPE tokenizer besides the split
// (llama.cpp's llama_vocab::impl::load, per name).
struct PreTokenizerTraits {
  // A piece that is itself a token is emitted without merging (HF ignore_merges).
  bool ignore_merges = false;
  // true: byte-level BPE (GPT-2 byte symbols). false (gemma4, sarvam-moe,
  // whitespace): symbols are the text's UTF-8 characters, and a final symbol
  // that is no token becomes its bytes' "<0xNN>" tokens (skipped if absent).
  bool byte_encode = true;
  // ' ' becomes U+2581 before splitting (SentencePiece-style BPE).
  bool escape_spaces = false;
  // gemma4: a piece made only of '\n' that is a token is emitted as that token.
  bool newline_tokens = false;
  // Whether BOS is added when tokenizer.ggml.add_bos_token is absent.
  bool add_bos_default = false;
  // gemma4: BOS is added even when tokenizer.ggml.add_bos_token says false.
  bool force_add_bos = false;
};

class PreTokenizer {
 public:
  // Errors: unsupported, naming `name` and listing the supported names.
  static Result<PreTokenizer> create(std::string_view name);
  // Every accepted name, in llama.cpp's order.
  static std::vector<std::string> names();
  // The traits of `name`, or nullptr for a name create() refuses.
  static const PreTokenizerTraits* traits_of(std::string_view name);

  const std::string& name() const noexcept { return name_; }
  // llama.cpp's pre-tokenizer type the name maps onto (e.g. "qwen2" for "hunyuan").
  const std::string& type() const noexcept { return type_; }
  const PreTokenizerTraits& traits() const noexcept { return traits_; }
  bool ignore_merges() const noexcept { return traits_.ignore_merges; }

  // Splits `text` into non-empty pieces whose concatenation is `text`.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct Stage {
    CustomSplit custom = nullptr;               // or:
    std::shared_ptr<const SplitRegex> regex;
  };
  std::string name_, type_;
  PreTokenizerTraits traits_;
  std::vector<Stage> stages_;
};

}  // namespace les
