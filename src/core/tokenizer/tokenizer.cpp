#include "core/tokenizer/tokenizer.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/tokenizer/tokenizer_bpe.h"
#include "core/tokenizer/tokenizer_spm.h"
#include "core/tokenizer/tokenizer_wpm.h"
#include "core/tokenizer/token_rules.h"
#include "core/tokenizer/utf8.h"

namespace les {

namespace {
Status out_of_range(int32_t id, int32_t n_tokens) {
  return invalid_argument_error(fmt::format("token id {} is out of range [0, {})", id, n_tokens));
}

bool is_special_type(TokenType t) {
  return t == TokenType::control || t == TokenType::user_defined || t == TokenType::unknown;
}
}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::create(std::shared_ptr<const Vocab> vocab) {
  if (!vocab) return invalid_argument_error("Tokenizer::create: null vocab");
  switch (vocab->model()) {
    case VocabModel::spm:
      return create_spm_tokenizer(std::move(vocab));
    case VocabModel::bpe:
      return create_bpe_tokenizer(std::move(vocab));
    case VocabModel::wpm:
      return create_wpm_tokenizer(std::move(vocab));
  }
  return internal_error("Tokenizer::create: unhandled vocab model");
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const gguf::GgufFile& file) {
  LES_ASSIGN_OR_RETURN(Vocab v, Vocab::from_gguf(file));
  return create(std::make_shared<const Vocab>(std::move(v)));
}

Tokenizer::Tokenizer(std::shared_ptr<const Vocab> vocab) : vocab_(std::move(vocab)) {
  for (int32_t id = 0; id < vocab_->n_tokens(); ++id)
    if (is_special_type(vocab_->type(id)) && !vocab_->text(id).empty()) specials_.push_back(id);
  std::stable_sort(specials_.begin(), specials_.end(), [this](int32_t a, int32_t b) {
    return vocab_->text(a).size() > vocab_->text(b).size();
  });
}

Tokenizer::~Tokenizer() = default;

bool Tokenizer::strips_space_prefix() const noexcept {
  return (vocab_->model() == VocabModel::spm && vocab_->add_space_prefix()) || vocab_->model() == VocabModel::wpm;
}

namespace {

// A piece of the text being tokenized: a special token, or the plain text [begin, end).
struct Fragment {
  int32_t token = kNoToken;
  size_t begin = 0, end = 0;
};

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

}  // namespace

Result<std::vector<int32_t>> Tokenizer::tokenize(std::string_view text, bool add_special,
                                                 bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocab_->add_bos()) out.push_back(vocab_->bos());

  std::vector<Fragment> frags, next;
  if (!text.empty()) frags.push_back({kNoToken, 0, text.size()});
  for (const int32_t id : specials_) {
    const TokenType type = vocab_->type(id);
    if (!parse_special && (type == TokenType::control || type == TokenType::unknown)) continue;
    const std::string& t = vocab_->text(id);
    const uint8_t strip = vocab_->strip(id);
    next.clear();
    bool found = false;
    for (const Fragment& f : frags) {
      if (f.token != kNoToken) {
        next.push_back(f);
        continue;
      }
      size_t pos = f.begin;
      for (size_t m; pos < f.end && (m = text.substr(0, f.end).find(t, pos)) != std::string_view::npos;) {
        found = true;
        size_t left_end = m;
        if (strip & kStripLeft)
          while (left_end > pos && is_ascii_space(text[left_end - 1])) --left_end;
        if (left_end > pos) next.push_back({kNoToken, pos, left_end});
        next.push_back({id, 0, 0});
        pos = m + t.size();
        if (strip & kStripRight)
          while (pos < f.end && is_ascii_space(text[pos])) ++pos;
      }
      if (pos < f.end) next.push_back({kNoToken, pos, f.end});
    }
    if (found) frags.swap(next);
  }

  bool after_special = true;
  for (const Fragment& f : frags) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    LES_RETURN_IF_ERROR(encode_text(text.substr(f.begin, f.end - f.begin), after_special, out));
    after_special = false;
  }

  if (add_special && vocab_->add_eos()) out.push_back(vocab_->eos());
  if (add_special && vocab_->add_sep()) out.push_back(vocab_->sep());
  return out;
}

Result<std::string> Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (!vocab_->is_valid_id(id)) return out_of_range(id, vocab_->n_tokens());
  switch (vocab_->type(id)) {
    case TokenType::control:
    case TokenType::unknown:
    case TokenType::unused:
      return render_special ? vocab_->text(id) : std::string();
    case TokenType::user_defined:
      return vocab_->text(id);
    case TokenType::undefined:
    case TokenType::normal:
    case TokenType::byte:
      break;
  }
  return text_piece(id);
}

Result<std::string> Tokenizer::detokenize(std::span<const int32_t> ids, bool render_special) const {
  StreamingDetokenizer stream(*this, /*strip_space_prefix=*/true, render_special);
  std::string out;
  for (const int32_t id : ids) {
    LES_ASSIGN_OR_RETURN(std::string s, stream.push(id));
    out += s;
  }
  out += stream.flush();
  return out;
}

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool strip_space_prefix,
                                           bool render_special)
    : tok_(tokenizer),
      strip_pending_(strip_space_prefix && tokenizer.strips_space_prefix()),
      render_special_(render_special) {}

Result<std::string> StreamingDetokenizer::push(int32_t id) {
  LES_ASSIGN_OR_RETURN(std::string piece, tok_.token_to_piece(id, render_special_));
  if (strip_pending_ && !piece.empty()) {
    // Only the space that tokenize() added in front of text is removed; a
    // special token's own text ends the leading position.
    const TokenType t = tok_.vocab().type(id);
    if (piece[0] == ' ' && t != TokenType::user_defined && t != TokenType::control &&
        t != TokenType::unknown) {
      piece.erase(0, 1);
    }
    strip_pending_ = false;
  }
  held_ += piece;
  const size_t n = utf8::complete_prefix_length(held_);
  std::string out = held_.substr(0, n);
  held_.erase(0, n);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace les
