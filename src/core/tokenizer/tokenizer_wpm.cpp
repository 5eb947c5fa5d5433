#include "core/tokenizer/tokenizer_wpm.h"

#include <utf8proc.h>

#include <algorithm>

#include "core/tokenizer/utf8.h"

namespace les {

namespace {

constexpr std::string_view kWordMark = "\xE2\x96\x81";  // U+2581

// White_Space (Unicode PropList.txt).
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// The CJK ideograph ranges of BERT's tokenizer (as HF `tokenizers` has them,
// including its 0x2B920 lower bound where 0x2B820 was meant).
bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// First code point of the canonical decomposition of c (c itself if none).
char32_t nfd_first(char32_t c) {
  utf8proc_int32_t buf[8];
  int last_boundclass = 0;
  const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), buf, 8, UTF8PROC_DECOMPOSE,
                                                     &last_boundclass);
  return n >= 1 ? static_cast<char32_t>(buf[0]) : c;
}

class WpmTokenizer final : public Tokenizer {
 public:
  explicit WpmTokenizer(std::shared_ptr<const Vocab> vocab) : Tokenizer(std::move(vocab)) {}

 protected:
  Status encode_text(std::string_view text, bool /*after_special*/, std::vector<int32_t>& out) const override {
    const Vocab& v = vocab();
    std::string word;
    for (const std::string& w : wpm_words(text, v.lowercase(), v.strip_accents())) {
      word.assign(kWordMark);
      word += w;
      const size_t n = word.size(), first = out.size();
      for (size_t i = 0; i < n;) {
        int32_t id = kNoToken;
        size_t j = std::min(n, i + v.max_token_len());
        for (; j > i; --j)
          if ((id = v.find(std::string_view(word).substr(i, j - i))) != kNoToken) break;
        if (id == kNoToken) {  // this position cannot be covered: the whole word is unknown
          out.resize(first);
          break;
        }
        out.push_back(id);
        i = j;
      }
      if (out.size() == first) out.push_back(v.unk());
    }
    return Status();
  }

  std::string text_piece(int32_t id) const override {
    const std::string& t = vocab().text(id);
    std::string out;
    for (size_t i = 0; i < t.size();) {
      if (std::string_view(t).substr(i).starts_with(kWordMark)) {
        out += ' ';
        i += kWordMark.size();
      } else {
        out += t[i++];
      }
    }
    return out;
  }
};

}  // namespace

std::vector<std::string> wpm_words(std::string_view text, bool lowercase, bool strip_accents) {
  std::vector<std::string> words(1);
  for (size_t i = 0; i < text.size();) {
    const utf8::Decoded d = utf8::decode(text, i);
    i += d.len;
    char32_t c = d.valid ? d.cp : utf8::kReplacement;
    if (strip_accents) c = nfd_first(c);
    if (is_white_space(c)) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    const utf8proc_category_t cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    const bool control = cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
                         cat == UTF8PROC_CATEGORY_CO || cat == UTF8PROC_CATEGORY_CS;
    if (c == 0 || c == utf8::kReplacement || control) continue;
    const bool mark = cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC || cat == UTF8PROC_CATEGORY_ME;
    if (strip_accents && mark) continue;
    const bool punct = cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
    const bool symbol = cat >= UTF8PROC_CATEGORY_SM && cat <= UTF8PROC_CATEGORY_SO;
    std::string s;
    utf8::append(s, lowercase ? static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))) : c);
    if (punct || (c < 0x7F && symbol) || is_cjk(c)) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = std::move(s);
      words.emplace_back();
    } else {
      words.back() += s;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

Result<std::unique_ptr<Tokenizer>> create_wpm_tokenizer(std::shared_ptr<const Vocab> vocab) {
  if (vocab->unk() == kNoToken)
    return format_error("WordPiece (bert) vocabulary has no unknown token id (tokenizer.ggml.unknown_token_id)");
  return std::unique_ptr<Tokenizer>(new WpmTokenizer(std::move(vocab)));
}

}  // namespace les
