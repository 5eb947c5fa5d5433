// Tokenizer: text <-> token ids for a Vocab, plus a streaming detokenizer.
//
// Three algorithms, chosen by tokenizer.ggml.model:
//   "llama" -> SentencePiece-style BPE over UTF-8 characters, merged by piece
//              score, with byte fallback <0xNN> (tokenizer_spm.cpp).
//   "gpt2"  -> byte-level BPE (GPT-2 byte<->unicode mapping) over the pieces
//              of a regex pre-tokenizer, merged by rank (tokenizer_bpe.cpp,
//              pre_tokenizer.h); some pre-tokenizers make it BPE over UTF-8
//              characters instead. "gemma4" and "whitespace" are variants of
//              it (tokenizer_bpe.h).
//   "bert"  -> WordPiece over lower-cased, accent-stripped words
//              (tokenizer_wpm.cpp).
// Other models (t5/UGM, rwkv, ...) and unknown pre-tokenizers are refused by
// create() with StatusCode::unsupported naming them.
//
// Special tokens, in llama.cpp's order: for each special token, longest text
// first (ties: lower id first), every occurrence in the text not yet claimed
// by a longer one splits it. USER_DEFINED tokens are always matched (as HF
// `tokenizers` and llama.cpp do with added non-special tokens); CONTROL and
// UNKNOWN tokens only when parse_special is true. A token with the strip flags
// of Vocab::strip() drops the ASCII whitespace before (kStripLeft) or after
// (kStripRight) it. Everything else is plain text for the model's algorithm.
//
// SPM space prefix: when add_space_prefix is set, a ' ' is put in front of the
// text at the start and after every special token (llama.cpp's behaviour, the
// reference for LES), and detokenize() removes the one leading space again, so
// detokenize(tokenize(s)) == s for any s without special tokens. The space is
// removed from the first non-empty text piece even after a BOS (llama.cpp's
// llama_detokenize keeps it when the first token is BOS); for ids without BOS
// the two agree (the reference `greedy.text` of the fixture JSONs).
//
// Invalid UTF-8 input is not an error: bytes that are not valid UTF-8 are kept
// and encoded as byte tokens (SPM <0xNN> pieces, BPE byte symbols), so they
// round-trip.
//
// Thread-safety: a Tokenizer is immutable after create(); tokenize,
// token_to_piece and detokenize may be called from several threads.
// A StreamingDetokenizer is single-threaded (one per output stream).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/vocab.h"
#include "util/status.h"

namespace les {

namespace gguf {
class GgufFile;
}

class Tokenizer {
 public:
  // Builds the tokenizer for `vocab`. Errors: unsupported (model type or
  // pre-tokenizer name), format (vocab unusable, e.g. a BPE vocab without
  // the 256 byte symbols).
  static Result<std::unique_ptr<Tokenizer>> create(std::shared_ptr<const Vocab> vocab);
  // Vocab::from_gguf + create.
  static Result<std::unique_ptr<Tokenizer>> from_gguf(const gguf::GgufFile& file);

  virtual ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  const Vocab& vocab() const noexcept { return *vocab_; }

  // Token ids of `text`. add_special: prepend BOS / append EOS as the vocab's
  // add_bos / add_eos say. parse_special: CONTROL/UNKNOWN token texts in
  // `text` become their ids (otherwise they are tokenized as plain text).
  // Errors: invalid_argument only if a character cannot be represented at all
  // (no piece, no byte piece, no unk token).
  Result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes token `id` stands for (not necessarily valid UTF-8: a byte
  // token is one byte). CONTROL/UNKNOWN/UNUSED tokens give "" unless
  // render_special, then their text. SPM pieces have U+2581 turned into ' '.
  // Errors: invalid_argument if id is not in [0, n_tokens).
  Result<std::string> token_to_piece(int32_t id, bool render_special = false) const;

  // Concatenated pieces of `ids`; for SPM vocabs with add_space_prefix the
  // leading ' ' of the first text piece is removed (the inverse of
  // tokenize). Errors: invalid_argument naming the first out-of-range id.
  Result<std::string> detokenize(std::span<const int32_t> ids, bool render_special = false) const;

 protected:
  explicit Tokenizer(std::shared_ptr<const Vocab> vocab);

  // Appends the ids of a fragment of plain text (no special tokens in it).
  // `after_special` is true for the first fragment and for a fragment that
  // follows a special token.
  virtual Status encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const = 0;
  // Bytes of a NORMAL / USER_DEFINED / BYTE token (id already checked).
  virtual std::string text_piece(int32_t id) const = 0;

 private:
  friend class StreamingDetokenizer;

  // Whether the leading ' ' of the first text piece is removed on decode.
  bool strips_space_prefix() const noexcept;

  std::shared_ptr<const Vocab> vocab_;
  // CONTROL, USER_DEFINED and UNKNOWN tokens with a non-empty text, longest
  // text first, then by id.
  std::vector<int32_t> specials_;
};

// Turns a stream of token ids into text, holding back the bytes of a UTF-8
// character that is split over several tokens (byte-fallback / byte-level
// tokens) until it is complete, so every push() returns whole characters.
// Bytes that can never form valid UTF-8 are passed through, not held.
// The output of push()* + flush() equals Tokenizer::detokenize() of the same
// ids with the same options.
class StreamingDetokenizer {
 public:
  // `tokenizer` is borrowed and must outlive this object. strip_space_prefix:
  // remove the SPM leading space like detokenize() (true for a standalone
  // sequence; false when continuing after text already shown).
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool strip_space_prefix = true,
                                bool render_special = false);

  // Adds one token; returns the bytes that are now complete (may be "").
  // Errors: invalid_argument for an out-of-range id (the state is unchanged).
  Result<std::string> push(int32_t id);
  // Returns whatever is still held back (an incomplete sequence) and resets.
  std::string flush();

 private:
  const Tokenizer& tok_;
  bool strip_pending_;
  bool render_special_;
  std::string held_;
};

}  // namespace les
