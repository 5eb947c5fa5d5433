#include "core/tokenizer/tokenizer_bpe.h"

#include <array>
#include <cstdio>
#include <queue>

#include <fmt/format.h>

#include "core/tokenizer/pre_tokenizer.h"
#include "core/tokenizer/unicode_class.h"
#include "core/tokenizer/utf8.h"

namespace les {

namespace {

// GPT-2 byte -> code point map.
constexpr bool maps_to_itself(unsigned b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr std::array<char32_t, 256> make_byte_to_cp() {
  std::array<char32_t, 256> t{};
  char32_t next = 256;
  for (unsigned b = 0; b < 256; ++b) t[b] = maps_to_itself(b) ? static_cast<char32_t>(b) : next++;
  return t;
}
constexpr std::array<char32_t, 256> kByteToCp = make_byte_to_cp();

// Inverse map: byte for code point cp, or -1 if cp is not a byte symbol.
int cp_to_byte(char32_t cp) {
  if (cp < 256) return maps_to_itself(static_cast<unsigned>(cp)) ? static_cast<int>(cp) : -1;
  if (cp >= 256 + 68) return -1;
  // The (cp-256)-th byte that does not map to itself.
  unsigned k = static_cast<unsigned>(cp - 256);
  for (unsigned b = 0; b < 256; ++b) {
    if (!maps_to_itself(b) && k-- == 0) return static_cast<int>(b);
  }
  return -1;
}

class BpeTokenizer final : public Tokenizer {
 public:
  BpeTokenizer(std::shared_ptr<const Vocab> vocab, PreTokenizer pre, std::array<int32_t, 256> byte_ids)
      : Tokenizer(std::move(vocab)), pre_(std::move(pre)), byte_ids_(byte_ids) {}

 protected:
  Status encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;
  std::string text_piece(int32_t id) const override;

 private:
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    bool alive;
    uint32_t offset;  // first byte in the piece
    uint8_t len;      // bytes before merging (1, or a UTF-8 character's length)
  };
  struct Bigram {
    int32_t rank;
    int32_t left;
    int32_t right;
    int32_t left_id;
    int32_t right_id;
  };
  struct LowerPriority {
    bool operator()(const Bigram& a, const Bigram& b) const {
      return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
  };
  using Queue = std::priority_queue<Bigram, std::vector<Bigram>, LowerPriority>;

  void try_add(const std::vector<Symbol>& syms, int32_t l, int32_t r, Queue& q) const {
    if (l < 0 || r < 0) return;
    const int32_t lid = syms[static_cast<size_t>(l)].id, rid = syms[static_cast<size_t>(r)].id;
    const Vocab::Merge* m = vocab().find_merge(lid, rid);
    if (m != nullptr) q.push({m->rank, l, r, lid, rid});
  }

  Status encode_piece(std::string_view piece, std::vector<int32_t>& out) const;
  // tokenizer.ggml.model "whitespace": words between White_Space runs, lowercased
  // if the vocabulary says so, each encoded on its own; the whitespace is dropped.
  Status encode_words(std::string_view text, std::vector<int32_t>& out) const;

  PreTokenizer pre_;
  std::array<int32_t, 256> byte_ids_;
};

Status BpeTokenizer::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  const PreTokenizerTraits& traits = pre_.traits();
  if (traits.ignore_merges) {
    int32_t id = kNoToken;
    if (traits.byte_encode) {
      std::string mapped;
      for (const char c : piece) utf8::append(mapped, kByteToCp[static_cast<unsigned char>(c)]);
      id = vocab().find(mapped);
    } else {
      id = vocab().find(piece);
    }
    if (id != kNoToken) {
      out.push_back(id);
      return {};
    }
  }
  if (traits.newline_tokens && piece.find_first_not_of('\n') == std::string_view::npos) {
    if (const int32_t id = vocab().find(piece); id != kNoToken) {
      out.push_back(id);
      return {};
    }
  }
  // One symbol per byte (byte-level BPE) or per UTF-8 character.
  std::vector<Symbol> syms;
  syms.reserve(piece.size());
  for (size_t i = 0; i < piece.size();) {
    const auto idx = static_cast<int32_t>(syms.size());
    if (traits.byte_encode) {
      syms.push_back({byte_ids_[static_cast<unsigned char>(piece[i])], idx - 1, idx + 1, true,
                      static_cast<uint32_t>(i), 1});
      ++i;
    } else {
      const uint8_t len = utf8::decode(piece, i).len;
      syms.push_back({vocab().find(piece.substr(i, len)), idx - 1, idx + 1, true, static_cast<uint32_t>(i), len});
      i += len;
    }
  }
  syms.back().next = -1;
  Queue q;
  for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); ++i) try_add(syms, i - 1, i, q);
  while (!q.empty()) {
    const Bigram b = q.top();
    q.pop();
    Symbol& l = syms[static_cast<size_t>(b.left)];
    Symbol& r = syms[static_cast<size_t>(b.right)];
    if (!l.alive || !r.alive || l.next != b.right || l.id != b.left_id || r.id != b.right_id) continue;
    l.id = vocab().find_merge(b.left_id, b.right_id)->result;
    r.alive = false;
    l.next = r.next;
    if (r.next >= 0) syms[static_cast<size_t>(r.next)].prev = b.left;
    try_add(syms, l.prev, b.left, q);
    try_add(syms, b.left, l.next, q);
  }
  for (int32_t i = 0; i >= 0; i = syms[static_cast<size_t>(i)].next) {
    const Symbol& sym = syms[static_cast<size_t>(i)];
    if (sym.id != kNoToken) {
      out.push_back(sym.id);
    } else if (!traits.byte_encode) {
      // Only a character that is no token stays kNoToken (it never merges):
      // its bytes' <0xNN> tokens, each skipped when the vocabulary lacks it (llama.cpp).
      for (uint32_t k = 0; k < sym.len; ++k) {
        const auto byte = static_cast<unsigned char>(piece[sym.offset + k]);
        if (const int32_t id = vocab().find(fmt::format("<0x{:02X}>", byte)); id != kNoToken) out.push_back(id);
      }
    } else if (vocab().unk() != kNoToken) {
      out.push_back(vocab().unk());
    } else {
      // Only a byte without a symbol stays kNoToken (it never merges).
      return invalid_argument_error(fmt::format(
          "cannot tokenize byte 0x{:02X}: the vocabulary has no symbol for it and no unknown token",
          static_cast<unsigned char>(piece[sym.offset])));
    }
  }
  return {};
}

Status BpeTokenizer::encode_text(std::string_view text, bool /*after_special*/, std::vector<int32_t>& out) const {
  if (text.size() > (UINT32_MAX >> 2)) return invalid_argument_error("text too long to tokenize (> 1 GiB)");
  std::string escaped;
  if (pre_.traits().escape_spaces) {
    escaped.reserve(text.size());
    for (const char c : text) {
      if (c == ' ') {
        escaped += "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's space
      } else {
        escaped += c;
      }
    }
    text = escaped;
  }
  if (vocab().model_name() == "whitespace") return encode_words(text, out);
  for (const std::string_view piece : pre_.split(text)) LES_RETURN_IF_ERROR(encode_piece(piece, out));
  return {};
}

Status BpeTokenizer::encode_words(std::string_view text, std::vector<int32_t>& out) const {
  std::string word;
  auto flush = [&]() -> Status {
    if (!word.empty()) {
      for (const std::string_view piece : pre_.split(word)) LES_RETURN_IF_ERROR(encode_piece(piece, out));
      word.clear();
    }
    return {};
  };
  for (size_t i = 0; i < text.size();) {
    const utf8::Decoded d = utf8::decode(text, i);
    if (d.valid && is_unicode_white_space(d.cp)) {
      LES_RETURN_IF_ERROR(flush());
    } else if (d.valid && vocab().lowercase()) {
      utf8::append(word, unicode_to_lower(d.cp));
    } else {
      word.append(text, i, d.len);
    }
    i += d.len;
  }
  return flush();
}

std::string BpeTokenizer::text_piece(int32_t id) const {
  const std::string& t = vocab().text(id);
  if (vocab().type(id) == TokenType::byte) {
    // "<0xNN>" (the byte-fallback tokens of SentencePiece-style BPE vocabularies).
    unsigned value = 0;
    if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
        std::sscanf(t.c_str() + 3, "%2X", &value) == 1) {
      return std::string(1, static_cast<char>(value));
    }
    return t;
  }
  std::string out;
  out.reserve(t.size());
  if (pre_.traits().escape_spaces) {
    // SentencePiece-style BPE: the text as it is, with U+2581 back to ' '.
    for (size_t i = 0; i < t.size();) {
      if (t.compare(i, 3, "\xE2\x96\x81") == 0) {
        out += ' ';
        i += 3;
      } else {
        out += t[i++];
      }
    }
    return out;
  }
  for (size_t i = 0; i < t.size();) {
    const utf8::Decoded d = utf8::decode(t, i);
    const int b = d.valid ? cp_to_byte(d.cp) : -1;
    if (b >= 0) {
      out.push_back(static_cast<char>(b));
    } else {
      out.append(t, i, d.len);  // not a byte symbol: keep the bytes as they are
    }
    i += d.len;
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> create_bpe_tokenizer(std::shared_ptr<const Vocab> vocab) {
  if (!vocab) return invalid_argument_error("create_bpe_tokenizer: null vocab");
  if (vocab->model() != VocabModel::bpe) {
    return invalid_argument_error(fmt::format("create_bpe_tokenizer: vocab model is '{}'", vocab->model_name()));
  }
  LES_ASSIGN_OR_RETURN(PreTokenizer pre, PreTokenizer::create(vocab->pre()));
  std::array<int32_t, 256> byte_ids{};
  for (unsigned b = 0; b < 256; ++b) {
    std::string sym;
    utf8::append(sym, kByteToCp[b]);
    byte_ids[b] = vocab->find(sym);  // kNoToken for bytes some vocabularies omit (0xC0, 0xF5.., controls)
  }
  return std::unique_ptr<Tokenizer>(new BpeTokenizer(std::move(vocab), std::move(pre), byte_ids));
}

}  // namespace les
