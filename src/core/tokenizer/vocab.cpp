#include "core/tokenizer/vocab.h"

#include <algorithm>
#include <functional>
#include <iterator>

#include <fmt/format.h>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/pre_tokenizer.h"
#include "core/tokenizer/token_rules.h"

namespace les {

namespace {

constexpr const char* kKeyModel = "tokenizer.ggml.model";
constexpr const char* kKeyPre = "tokenizer.ggml.pre";
constexpr const char* kKeyTokens = "tokenizer.ggml.tokens";
constexpr const char* kKeyScores = "tokenizer.ggml.scores";
constexpr const char* kKeyTypes = "tokenizer.ggml.token_type";
constexpr const char* kKeyMerges = "tokenizer.ggml.merges";

// Reads an optional integer key into `out`.
Status read_opt_id(const gguf::GgufFile& f, const char* key, std::optional<int64_t>& out) {
  if (f.find(key) == nullptr) return {};
  LES_ASSIGN_OR_RETURN(int64_t v, f.get_int(key));
  out = v;
  return {};
}

Status read_opt_bool(const gguf::GgufFile& f, const char* key, std::optional<bool>& out) {
  if (f.find(key) == nullptr) return {};
  LES_ASSIGN_OR_RETURN(bool v, f.get_bool(key));
  out = v;
  return {};
}

Result<std::vector<std::string>> read_string_array(const gguf::GgufFile& f, const char* key) {
  LES_ASSIGN_OR_RETURN(const gguf::Array* a, f.get_array(key));
  if (a->elem_type != gguf::ValueType::STRING) {
    return format_error(fmt::format("key '{}' is an array of {}, expected STRING", key,
                                    gguf::value_type_name(a->elem_type)));
  }
  std::vector<std::string> out;
  out.reserve(a->count);
  for (uint64_t i = 0; i < a->count; ++i) {
    const std::string* s = a->string_at(i);
    if (s == nullptr) return format_error(fmt::format("key '{}': element {} is not a string", key, i));
    out.push_back(*s);
  }
  return out;
}

Status unsupported_model(const std::string& model) {
  return unsupported_error(fmt::format(
      "tokenizer model '{}' is not supported (supported: 'llama' = SentencePiece, 'gpt2' = byte-level BPE, "
      "'gemma4' = SentencePiece-style BPE, 'whitespace' = BPE of whitespace-separated words, "
      "'bert' = WordPiece)",
      model));
}

// Resolves an optional special id: absent -> fallback (if it exists), present
// -> must be a valid id.
Result<int32_t> resolve_id(const std::optional<int64_t>& v, int32_t fallback, int32_t n_tokens,
                           const char* what) {
  if (!v.has_value()) return (fallback >= 0 && fallback < n_tokens) ? fallback : kNoToken;
  if (*v < 0 || *v >= n_tokens) {
    return format_error(fmt::format("tokenizer {} token id {} is out of range (n_tokens {})", what, *v,
                                    n_tokens));
  }
  return static_cast<int32_t>(*v);
}

}  // namespace

Result<Vocab> Vocab::from_gguf(const gguf::GgufFile& f) {
  VocabData d;
  LES_ASSIGN_OR_RETURN(d.model, f.get_string(kKeyModel));
  // Refuse unsupported models before reading the (possibly large) arrays.
  if (d.model != "llama" && d.model != "gpt2" && d.model != "gemma4" && d.model != "whitespace" && d.model != "bert") {
    return unsupported_model(d.model);
  }
  LES_ASSIGN_OR_RETURN(d.pre, f.get_string_or(kKeyPre, ""));
  LES_ASSIGN_OR_RETURN(d.name, f.get_string_or("general.name", ""));
  LES_ASSIGN_OR_RETURN(d.arch, f.get_string_or("general.architecture", ""));
  LES_ASSIGN_OR_RETURN(d.tokens, read_string_array(f, kKeyTokens));

  if (f.find(kKeyScores) != nullptr) {
    LES_ASSIGN_OR_RETURN(const gguf::Array* a, f.get_array(kKeyScores));
    d.scores.reserve(a->count);
    for (uint64_t i = 0; i < a->count; ++i) {
      const auto v = a->float_at(i);
      if (!v) return format_error(fmt::format("key '{}': element {} is not a number", kKeyScores, i));
      d.scores.push_back(static_cast<float>(*v));
    }
  }
  if (f.find(kKeyTypes) != nullptr) {
    LES_ASSIGN_OR_RETURN(const gguf::Array* a, f.get_array(kKeyTypes));
    d.types.reserve(a->count);
    for (uint64_t i = 0; i < a->count; ++i) {
      const auto v = a->int_at(i);
      if (!v) return format_error(fmt::format("key '{}': element {} is not an integer", kKeyTypes, i));
      if (*v < 0 || *v > 6) {
        return format_error(fmt::format("key '{}': token {} has type {}, expected 0..6", kKeyTypes, i, *v));
      }
      d.types.push_back(static_cast<TokenType>(*v));
    }
  }
  if (f.find(kKeyMerges) != nullptr) {
    LES_ASSIGN_OR_RETURN(d.merges, read_string_array(f, kKeyMerges));
  }
  LES_RETURN_IF_ERROR(read_opt_id(f, "tokenizer.ggml.bos_token_id", d.bos));
  LES_RETURN_IF_ERROR(read_opt_id(f, "tokenizer.ggml.eos_token_id", d.eos));
  LES_RETURN_IF_ERROR(read_opt_id(f, "tokenizer.ggml.unknown_token_id", d.unk));
  LES_RETURN_IF_ERROR(read_opt_id(f, "tokenizer.ggml.padding_token_id", d.pad));
  LES_RETURN_IF_ERROR(read_opt_id(f, "tokenizer.ggml.seperator_token_id", d.sep));
  LES_RETURN_IF_ERROR(read_opt_bool(f, "tokenizer.ggml.normalizer.lowercase", d.lowercase));
  LES_RETURN_IF_ERROR(read_opt_bool(f, "tokenizer.ggml.normalizer.strip_accents", d.strip_accents));
  const char* fim_keys[6] = {"pre", "suf", "mid", "pad", "rep", "sep"};
  for (int k = 0; k < 6; ++k)
    d.fim_ids_given[k] = f.find(fmt::format("tokenizer.ggml.fim_{}_token_id", fim_keys[k])) != nullptr;
  // The deprecated names of the first three.
  for (int k = 0; k < 3; ++k) {
    const char* old_keys[3] = {"tokenizer.ggml.prefix_token_id", "tokenizer.ggml.suffix_token_id",
                               "tokenizer.ggml.middle_token_id"};
    d.fim_ids_given[k] = d.fim_ids_given[k] || f.find(old_keys[k]) != nullptr;
  }
  LES_RETURN_IF_ERROR(read_opt_bool(f, "tokenizer.ggml.add_bos_token", d.add_bos));
  LES_RETURN_IF_ERROR(read_opt_bool(f, "tokenizer.ggml.add_eos_token", d.add_eos));
  LES_RETURN_IF_ERROR(read_opt_bool(f, "tokenizer.ggml.add_space_prefix", d.add_space_prefix));
  return build(std::move(d));
}

Result<Vocab> Vocab::build(VocabData d) {
  Vocab v;
  if (d.model == "llama") {
    v.model_ = VocabModel::spm;
  } else if (d.model == "gpt2") {
    v.model_ = VocabModel::bpe;
  } else if (d.model == "whitespace") {
    v.model_ = VocabModel::bpe;  // BPE over the words between whitespace (tokenizer_bpe.h)
  } else if (d.model == "gemma4") {
    v.model_ = VocabModel::bpe;  // llama.cpp: BPE with the "gemma4" pre-tokenizer, whatever tokenizer.ggml.pre says
    d.pre = "gemma4";
  } else if (d.model == "bert") {
    v.model_ = VocabModel::wpm;
  } else {
    return unsupported_model(d.model);
  }
  v.model_name_ = d.model;
  v.pre_ = d.pre.empty() ? "default" : d.pre;
  if (d.pre.empty() && v.model_ == VocabModel::bpe)
    v.warnings_.push_back(
        "tokenizer.ggml.pre is missing: using llama.cpp's 'default' pre-tokenizer; the text may be split "
        "differently from the model's own tokenizer (generation quality may suffer; regenerate the GGUF with a "
        "current converter)");
  if (d.tokens.empty()) return format_error("tokenizer has no tokens (tokenizer.ggml.tokens is empty)");
  if (d.tokens.size() > static_cast<size_t>(INT32_MAX)) return format_error("tokenizer has too many tokens");
  const size_t n = d.tokens.size();
  if (!d.scores.empty() && d.scores.size() != n) {
    return format_error(fmt::format("tokenizer.ggml.scores has {} entries, expected {} (one per token)",
                                    d.scores.size(), n));
  }
  if (!d.types.empty() && d.types.size() != n) {
    return format_error(fmt::format("tokenizer.ggml.token_type has {} entries, expected {} (one per token)",
                                    d.types.size(), n));
  }
  for (size_t i = 0; i < d.types.size(); ++i) {
    const auto t = static_cast<int32_t>(d.types[i]);
    if (t < 0 || t > 6) return format_error(fmt::format("token {} has type {}, expected 0..6", i, t));
  }
  v.tokens_ = std::move(d.tokens);
  v.scores_ = d.scores.empty() ? std::vector<float>(n, 0.0f) : std::move(d.scores);
  v.types_ = d.types.empty() ? std::vector<TokenType>(n, TokenType::normal) : std::move(d.types);
  size_t id_cap = 16;
  v.id_shift_ = 60;
  while (id_cap < 2 * n) {
    id_cap *= 2;
    --v.id_shift_;
  }
  v.id_table_.assign(id_cap, kNoToken);
  for (size_t i = 0; i < n; ++i) v.id_table_[v.id_slot(v.tokens_[i])] = static_cast<int32_t>(i);  // last wins

  const auto n_tok = static_cast<int32_t>(n);
  const bool spm = v.model_ == VocabModel::spm, wpm = v.model_ == VocabModel::wpm;
  LES_ASSIGN_OR_RETURN(v.bos_, resolve_id(d.bos, spm ? 1 : wpm ? 101 : kNoToken, n_tok, "bos"));
  LES_ASSIGN_OR_RETURN(v.eos_, resolve_id(d.eos, spm ? 2 : kNoToken, n_tok, "eos"));
  LES_ASSIGN_OR_RETURN(v.unk_, resolve_id(d.unk, spm ? 0 : wpm ? 100 : kNoToken, n_tok, "unknown"));
  LES_ASSIGN_OR_RETURN(v.pad_, resolve_id(d.pad, wpm ? 0 : kNoToken, n_tok, "padding"));
  LES_ASSIGN_OR_RETURN(v.sep_, resolve_id(d.sep, wpm ? 102 : kNoToken, n_tok, "separator"));
  // WPM adds [CLS] (bos) and [SEP] with add_special whatever add_bos_token says (llama.cpp's WPM).
  // BPE: some pre-tokenizer names imply BOS when the file does not say (llama3,
  // tekken, chameleon), and gemma4 always adds it (llama.cpp's load()).
  const PreTokenizerTraits* pre_traits = v.model_ == VocabModel::bpe ? PreTokenizer::traits_of(v.pre_) : nullptr;
  v.add_bos_ = wpm || d.add_bos.value_or(spm || (pre_traits != nullptr && pre_traits->add_bos_default)) ||
               (pre_traits != nullptr && pre_traits->force_add_bos);
  v.add_eos_ = d.add_eos.value_or(false);
  v.add_sep_ = wpm;
  v.add_space_prefix_ = d.add_space_prefix.value_or(spm);
  // llama.cpp's normaliser lowercases by default, except for the "whitespace" pre-tokenizer.
  v.lowercase_ = d.lowercase.value_or(!(v.model_ == VocabModel::bpe && v.pre_ == "whitespace"));
  v.strip_accents_ = d.strip_accents.value_or(v.lowercase_);
  if (v.add_bos_ && v.bos_ == kNoToken) return format_error("tokenizer asks to add BOS but has no bos token id");
  if (v.add_eos_ && v.eos_ == kNoToken) return format_error("tokenizer asks to add EOS but has no eos token id");
  if (v.add_sep_ && v.sep_ == kNoToken) return format_error("WPM tokenizer has no separator ([SEP]) token id");
  for (const std::string& t : v.tokens_) v.max_token_len_ = std::max(v.max_token_len_, t.size());

  TokenRuleInputs rules;
  rules.name = d.name;
  rules.arch = d.arch;
  rules.pre = d.pre;
  std::copy(std::begin(d.fim_ids_given), std::end(d.fim_ids_given), rules.fim_ids_given);
  TokenRuleResult rr = apply_token_rules(rules, v.tokens_, v.types_, v.eos_,
                                         [&v](std::string_view text) { return v.find(text); });
  v.eog_ = std::move(rr.eog);
  v.strip_ = std::move(rr.strip);
  v.warnings_.insert(v.warnings_.end(), rr.warnings.begin(), rr.warnings.end());

  if (d.merges.size() > static_cast<size_t>(INT32_MAX)) return format_error("tokenizer has too many merges");
  size_t cap = 16;
  v.merge_shift_ = 60;
  while (cap < 2 * d.merges.size()) {
    cap *= 2;
    --v.merge_shift_;
  }
  v.merge_table_.assign(cap, MergeSlot{kEmptyKey, Merge{}});
  std::string joined;
  for (size_t r = 0; r < d.merges.size(); ++r) {
    const std::string& m = d.merges[r];
    // Split at the first space after the first character (a side is never empty).
    const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (sp == std::string::npos) {
      return format_error(fmt::format("tokenizer.ggml.merges[{}] = '{}' is not 'left right'", r, m));
    }
    const std::string_view left(m.data(), sp);
    const std::string_view right(m.data() + sp + 1, m.size() - sp - 1);
    joined.assign(left);
    joined.append(right);
    const int32_t l = v.find(left), rt = v.find(right), res = v.find(joined);
    if (l == kNoToken || rt == kNoToken || res == kNoToken) {
      ++v.n_merges_dropped_;
      continue;
    }
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(rt);
    // A repeated pair keeps its first (lowest) rank.
    MergeSlot& slot = v.merge_table_[v.merge_slot(key)];
    if (slot.key == kEmptyKey) {
      slot = MergeSlot{key, Merge{static_cast<int32_t>(r), res}};
      ++v.n_merges_;
    }
  }
  return v;
}

int32_t Vocab::find(std::string_view text) const {
  return id_table_.empty() ? kNoToken : id_table_[id_slot(text)];
}

size_t Vocab::id_slot(std::string_view text) const noexcept {
  const size_t mask = id_table_.size() - 1;
  const uint64_t h = std::hash<std::string_view>{}(text);
  size_t i = static_cast<size_t>((h * 0x9E3779B97F4A7C15ull) >> id_shift_);
  for (int32_t id; (id = id_table_[i]) != kNoToken; i = (i + 1) & mask) {
    if (tokens_[static_cast<size_t>(id)] == text) break;
  }
  return i;
}

size_t Vocab::merge_slot(uint64_t key) const noexcept {
  const size_t mask = merge_table_.size() - 1;
  size_t i = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> merge_shift_);  // Fibonacci hashing
  while (merge_table_[i].key != key && merge_table_[i].key != kEmptyKey) i = (i + 1) & mask;
  return i;
}

const Vocab::Merge* Vocab::find_merge(int32_t left, int32_t right) const {
  if (left < 0 || right < 0 || merge_table_.empty()) return nullptr;
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  const MergeSlot& slot = merge_table_[merge_slot(key)];
  return slot.key == key ? &slot.merge : nullptr;
}

}  // namespace les
