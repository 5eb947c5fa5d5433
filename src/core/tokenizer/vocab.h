// Vocab: the tokenizer vocabulary of a model, read from GGUF `tokenizer.ggml.*`
// metadata (or built in memory for tests).
//
// Keys read (source: GGUF spec, "Tokenizer" section, and the files llama.cpp's
// converter writes):
//   tokenizer.ggml.model          string: "llama" (SentencePiece BPE, SPM),
//                                 "gpt2" (BPE), "gemma4" (BPE whose pre-tokenizer
//                                 is "gemma4" whatever tokenizer.ggml.pre says),
//                                 "whitespace" (BPE of the words between
//                                 whitespace, tokenizer_bpe.h) or "bert"
//                                 (WordPiece, WPM). Anything else ("t5", "rwkv",
//                                 ...) is unsupported.
//   tokenizer.ggml.pre            string, optional: pre-tokenizer name (BPE,
//                                 pre_tokenizer.h); absent = llama.cpp's "default"
//                                 pre-tokenizer, with a warning (warnings()).
//   tokenizer.ggml.tokens         array of string, one per token id.
//   tokenizer.ggml.scores         array of float32, optional (SPM merge priority).
//   tokenizer.ggml.token_type     array of int32, optional (TokenType values).
//   tokenizer.ggml.merges         array of string "left right", BPE only; the
//                                 index is the merge rank (0 = merged first).
//   tokenizer.ggml.{bos,eos,unknown,padding,seperator}_token_id   uint32, optional
//                                 (sic: "seperator", as llama.cpp's converter writes it).
//   tokenizer.ggml.{add_bos_token,add_eos_token,add_space_prefix}  bool, optional.
//   tokenizer.ggml.normalizer.{lowercase,strip_accents}  bool, optional (WPM, and
//                                 lowercase for the "whitespace" model; default true
//                                 except with pre "whitespace", strip_accents
//                                 defaulting to lowercase).
//   tokenizer.ggml.fim_{pre,suf,mid,pad,rep,sep}_token_id: only whether present
//                                 (token_rules.h); general.name, general.architecture.
// Defaults when a key is absent: SPM bos=1, eos=2, unk=0 (when those ids
// exist), add_bos=true, add_space_prefix=true; BPE ids none, add_bos=false
// except for the pre-tokenizers that imply it (PreTokenizerTraits: llama3 and
// its aliases, tekken, chameleon; gemma4 adds BOS even when told not to),
// add_space_prefix=false; WPM bos=101 ([CLS]), unk=100, sep=102 ([SEP]),
// pad=0, BOS and SEP always added with add_special (llama.cpp's WPM);
// add_eos=false.
// Token types are then adjusted by llama.cpp's load-time rules (token_rules.h:
// control-looking texts, end-of-generation set, strip flags).
//
// Errors: unsupported (model type), format (missing tokens, array length or
// element type mismatch, token type out of 0..6, special id out of range).
//
// Thread-safety: immutable after construction; all members are const.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace les {

namespace gguf {
class GgufFile;
}

// "No token" sentinel for optional special ids.
inline constexpr int32_t kNoToken = -1;

// tokenizer.ggml.token_type values (same numbering as llama.cpp / gguf-py).
enum class TokenType : int32_t {
  undefined = 0,
  normal = 1,
  unknown = 2,
  control = 3,       // <s>, </s>, <|im_start|>: never produced from text unless parse_special
  user_defined = 4,  // added tokens: always matched literally in text
  unused = 5,
  byte = 6,          // SPM byte-fallback piece "<0xNN>"
};

// Which tokenization algorithm the vocabulary is for.
enum class VocabModel {
  spm,  // tokenizer.ggml.model = "llama"
  bpe,  // tokenizer.ggml.model = "gpt2", "gemma4" or "whitespace"
  wpm,  // tokenizer.ggml.model = "bert"
};

// Everything needed to build a Vocab; the GGUF loader fills it, tests build it
// by hand. Empty `scores`/`types` mean all 0 / all normal.
struct VocabData {
  std::string model;  // "llama", "gpt2", "gemma4", "whitespace" or "bert"
  std::string pre;    // "" = absent
  std::string name, arch;  // general.name, general.architecture ("" = absent)
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  std::vector<std::string> merges;  // "left right"
  std::optional<int64_t> bos, eos, unk, pad, sep;
  std::optional<bool> add_bos, add_eos, add_space_prefix;
  std::optional<bool> lowercase, strip_accents;  // WPM normaliser
  bool fim_ids_given[6] = {};  // tokenizer.ggml.fim_{pre,suf,mid,pad,rep,sep}_token_id present
};

class Vocab {
 public:
  // A BPE merge: the rank (priority, lower first) and the token id it produces.
  struct Merge {
    int32_t rank = 0;
    int32_t result = kNoToken;
  };

  // Reads the keys listed at the top of this file.
  static Result<Vocab> from_gguf(const gguf::GgufFile& file);
  // Validates and indexes `data`. Merges whose sides or result are not tokens
  // are dropped (they can never apply); see n_merges_dropped().
  static Result<Vocab> build(VocabData data);

  VocabModel model() const noexcept { return model_; }
  const std::string& model_name() const noexcept { return model_name_; }
  // Pre-tokenizer name; "default" when the key is absent.
  const std::string& pre() const noexcept { return pre_; }
  // Things a user should know about this vocabulary (a missing pre-tokenizer,
  // token types overridden by token_rules.h), one sentence each.
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

  int32_t n_tokens() const noexcept { return static_cast<int32_t>(tokens_.size()); }
  bool is_valid_id(int32_t id) const noexcept { return id >= 0 && id < n_tokens(); }
  // Precondition for the three below: is_valid_id(id).
  const std::string& text(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }
  float score(int32_t id) const { return scores_[static_cast<size_t>(id)]; }
  TokenType type(int32_t id) const { return types_[static_cast<size_t>(id)]; }
  // kStripLeft / kStripRight (token_rules.h): whitespace next to this special token is dropped.
  uint8_t strip(int32_t id) const { return strip_[static_cast<size_t>(id)]; }

  // Id of the token whose text is exactly `text`, or kNoToken. When the file
  // has duplicate texts the last id wins (as llama.cpp does).
  int32_t find(std::string_view text) const;

  // The merge of adjacent tokens (left, right), or null if there is none.
  const Merge* find_merge(int32_t left, int32_t right) const;
  size_t n_merges() const noexcept { return n_merges_; }
  size_t n_merges_dropped() const noexcept { return n_merges_dropped_; }

  int32_t bos() const noexcept { return bos_; }
  int32_t eos() const noexcept { return eos_; }
  int32_t unk() const noexcept { return unk_; }
  int32_t pad() const noexcept { return pad_; }
  int32_t sep() const noexcept { return sep_; }
  bool add_bos() const noexcept { return add_bos_; }
  bool add_eos() const noexcept { return add_eos_; }
  bool add_sep() const noexcept { return add_sep_; }  // WPM: [SEP] after the text with add_special
  bool add_space_prefix() const noexcept { return add_space_prefix_; }
  bool lowercase() const noexcept { return lowercase_; }          // WPM normaliser, "whitespace" model
  bool strip_accents() const noexcept { return strip_accents_; }  // WPM normaliser
  // Tokens that end generation: eos (if any) first, then every end-of-turn
  // marker llama.cpp recognises (token_rules.h), ascending.
  const std::vector<int32_t>& eog() const noexcept { return eog_; }
  // Length in bytes of the longest token text.
  size_t max_token_len() const noexcept { return max_token_len_; }

 private:
  VocabModel model_ = VocabModel::spm;
  std::string model_name_;
  std::string pre_;
  std::vector<std::string> warnings_;
  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::vector<uint8_t> strip_;
  std::vector<int32_t> eog_;
  size_t max_token_len_ = 0;
  // Text -> id: open addressing over token ids (linear probing, power-of-two
  // size, at most half full), compared against tokens_; kNoToken = free.
  std::vector<int32_t> id_table_;
  int id_shift_ = 60;  // 64 - log2(id_table_.size())
  size_t id_slot(std::string_view text) const noexcept;  // slot holding text, or the free slot where it goes
  // BPE merges in an open-addressing table (linear probing, power-of-two
  // size, at most half full): key (uint64 left << 32) | right, kEmptyKey free.
  struct MergeSlot {
    uint64_t key;
    Merge merge;
  };
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};
  size_t merge_slot(uint64_t key) const noexcept;  // slot holding key, or the free slot where it goes
  std::vector<MergeSlot> merge_table_;
  int merge_shift_ = 60;  // 64 - log2(merge_table_.size())
  size_t n_merges_ = 0;
  size_t n_merges_dropped_ = 0;
  int32_t bos_ = kNoToken, eos_ = kNoToken, unk_ = kNoToken, pad_ = kNoToken, sep_ = kNoToken;
  bool add_bos_ = false, add_eos_ = false, add_sep_ = false, add_space_prefix_ = false;
  bool lowercase_ = false, strip_accents_ = false;
};

}  // namespace les
