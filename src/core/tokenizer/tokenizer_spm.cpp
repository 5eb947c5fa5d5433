#include "core/tokenizer/tokenizer_spm.h"

#include <array>
#include <queue>

#include <fmt/format.h>

#include "core/tokenizer/utf8.h"

namespace les {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(std::shared_ptr<const Vocab> vocab) : Tokenizer(std::move(vocab)) {
    const Vocab& v = this->vocab();
    for (int b = 0; b < 256; ++b) byte_ids_[static_cast<size_t>(b)] = v.find(fmt::format("<0x{:02X}>", b));
    // Every adjacent character pair inside any token text (escaped, as the
    // text to tokenize is) goes into a Bloom filter of about 8 bits per pair,
    // between 64 Kibit and 16 Mibit (2 MiB).
    size_t n_pairs = 0;
    for (int32_t id = 0; id < v.n_tokens(); ++id) n_pairs += v.text(id).size();
    size_t n_bits = size_t{1} << 16;
    while (n_bits < 8 * n_pairs && n_bits < (size_t{1} << 24)) n_bits *= 2;
    pair_bits_.assign(n_bits / 64, 0);
    pair_mask_ = n_bits - 1;
    for (int32_t id = 0; id < v.n_tokens(); ++id) {
      const std::string& t = v.text(id);
      uint32_t prev = 0;
      for (size_t i = 0; i < t.size();) {
        const utf8::Decoded d = utf8::decode(t, i);
        const uint32_t key = char_key(d, static_cast<unsigned char>(t[i]));
        if (i > 0) add_pair(prev, key);
        prev = key;
        i += d.len;
      }
    }
  }

 protected:
  Status encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;
  std::string text_piece(int32_t id) const override;

 private:
  struct Symbol {
    int32_t prev;
    int32_t next;
    uint32_t start;  // byte offset in the escaped text
    uint32_t len;    // 0 once merged into its left neighbour
  };
  struct Bigram {
    float score;
    int32_t left;
    int32_t right;
    uint32_t len;
  };
  struct LowerPriority {
    bool operator()(const Bigram& a, const Bigram& b) const {
      return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
  };
  using Queue = std::priority_queue<Bigram, std::vector<Bigram>, LowerPriority>;

  void try_add(const std::string& s, const std::vector<Symbol>& syms, int32_t l, int32_t r, Queue& q) const {
    if (l < 0 || r < 0) return;
    const Symbol& a = syms[static_cast<size_t>(l)];
    const Symbol& b = syms[static_cast<size_t>(r)];
    const uint32_t len = a.len + b.len;
    const int32_t id = vocab().find(std::string_view(s).substr(a.start, len));
    if (id == kNoToken) return;
    q.push({vocab().score(id), l, r, len});
  }

  // Characters as 32-bit keys: the code point, or 0x110000 + byte for an
  // invalid byte (so it never equals a real character).
  static uint32_t char_key(const utf8::Decoded& d, unsigned char first_byte) {
    return d.valid ? static_cast<uint32_t>(d.cp) : 0x110000u + first_byte;
  }
  // Two bit positions of a character pair in the Bloom filter.
  uint64_t pair_hash(uint32_t a, uint32_t b) const noexcept {
    return ((static_cast<uint64_t>(a) << 32) | b) * 0x9E3779B97F4A7C15ull;
  }
  void add_pair(uint32_t a, uint32_t b) {
    const uint64_t h = pair_hash(a, b);
    for (const uint64_t bit : {h & pair_mask_, (h >> 32) & pair_mask_}) pair_bits_[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  // False only if no token contains the pair a,b (a Bloom filter: "true"
  // may be wrong, which only makes a segment longer).
  bool may_be_inner_pair(uint32_t a, uint32_t b) const noexcept {
    const uint64_t h = pair_hash(a, b);
    for (const uint64_t bit : {h & pair_mask_, (h >> 32) & pair_mask_}) {
      if ((pair_bits_[bit / 64] & (uint64_t{1} << (bit % 64))) == 0) return false;
    }
    return true;
  }

  // Runs the merges on symbols [begin, end) and appends their ids.
  Status encode_segment(const std::string& s, std::vector<Symbol>& syms, int32_t begin, int32_t end,
                        std::vector<int32_t>& out) const;

  std::array<int32_t, 256> byte_ids_{};
  // Adjacent character pairs that occur inside some token. Between two
  // characters whose pair is not here no merge can ever happen, so the text
  // is cut there and each segment merged on its own (same result as merging
  // the whole text, with a small heap per segment).
  std::vector<uint64_t> pair_bits_;
  uint64_t pair_mask_ = 0;
};

Status SpmTokenizer::encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const {
  if (text.size() > UINT32_MAX / 4) return invalid_argument_error("text too long to tokenize (> 1 GiB)");
  std::string s;
  s.reserve(text.size() + 8);
  if (after_special && vocab().add_space_prefix()) s.append(kSpaceMark);
  for (const char c : text) {
    if (c == ' ') {
      s.append(kSpaceMark);
    } else {
      s.push_back(c);
    }
  }

  std::vector<Symbol> syms;
  std::vector<uint32_t> keys;
  syms.reserve(s.size());
  keys.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const utf8::Decoded d = utf8::decode(s, i);
    syms.push_back({0, 0, static_cast<uint32_t>(i), d.len});
    keys.push_back(char_key(d, static_cast<unsigned char>(s[i])));
    i += d.len;
  }
  // Independent segments: no piece contains the adjacent pair at a cut.
  size_t begin = 0;
  for (size_t i = 1; i <= syms.size(); ++i) {
    if (i < syms.size() && may_be_inner_pair(keys[i - 1], keys[i])) continue;
    LES_RETURN_IF_ERROR(encode_segment(s, syms, static_cast<int32_t>(begin), static_cast<int32_t>(i), out));
    begin = i;
  }
  return {};
}

Status SpmTokenizer::encode_segment(const std::string& s, std::vector<Symbol>& syms, int32_t begin, int32_t end,
                                    std::vector<int32_t>& out) const {
  for (int32_t i = begin; i < end; ++i) {
    syms[static_cast<size_t>(i)].prev = i - 1 >= begin ? i - 1 : -1;
    syms[static_cast<size_t>(i)].next = i + 1 < end ? i + 1 : -1;
  }
  Queue q;
  for (int32_t i = begin + 1; i < end; ++i) try_add(s, syms, i - 1, i, q);
  while (!q.empty()) {
    const Bigram b = q.top();
    q.pop();
    Symbol& l = syms[static_cast<size_t>(b.left)];
    Symbol& r = syms[static_cast<size_t>(b.right)];
    // Stale entry: one side was merged away or grew since it was queued.
    if (l.len == 0 || r.len == 0 || l.next != b.right || l.len + r.len != b.len) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) syms[static_cast<size_t>(r.next)].prev = b.left;
    try_add(s, syms, l.prev, b.left, q);
    try_add(s, syms, b.left, l.next, q);
  }

  for (int32_t i = begin; i >= 0; i = syms[static_cast<size_t>(i)].next) {
    const Symbol& sym = syms[static_cast<size_t>(i)];
    const std::string_view piece = std::string_view(s).substr(sym.start, sym.len);
    const int32_t id = vocab().find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      continue;
    }
    // Only single characters can be missing (merges only form pieces).
    for (const char c : piece) {
      const int32_t bid = byte_ids_[static_cast<unsigned char>(c)];
      if (bid != kNoToken) {
        out.push_back(bid);
      } else if (vocab().unk() != kNoToken) {
        out.push_back(vocab().unk());
        break;  // one unk per character
      } else {
        return invalid_argument_error(fmt::format(
            "cannot tokenize byte 0x{:02X}: no piece, no <0x{:02X}> byte piece and no unknown token",
            static_cast<unsigned char>(c), static_cast<unsigned char>(c)));
      }
    }
  }
  return {};
}

std::string SpmTokenizer::text_piece(int32_t id) const {
  const std::string& t = vocab().text(id);
  if (vocab().type(id) == TokenType::byte) {
    // "<0xNN>"
    if (t.size() == 6 && t.starts_with("<0x") && t[5] == '>') {
      unsigned v = 0;
      bool ok = true;
      for (size_t k = 3; k < 5; ++k) {
        const char c = t[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
        else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
        else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
        else ok = false;
      }
      if (ok) return std::string(1, static_cast<char>(v));
    }
    return t;
  }
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size();) {
    if (std::string_view(t).substr(i).starts_with(kSpaceMark)) {
      out.push_back(' ');
      i += kSpaceMark.size();
    } else {
      out.push_back(t[i++]);
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> create_spm_tokenizer(std::shared_ptr<const Vocab> vocab) {
  if (!vocab) return invalid_argument_error("create_spm_tokenizer: null vocab");
  if (vocab->model() != VocabModel::spm) {
    return invalid_argument_error(fmt::format("create_spm_tokenizer: vocab model is '{}'", vocab->model_name()));
  }
  if (vocab->pre() != "default") {
    return unsupported_error(fmt::format(
        "pre-tokenizer '{}' is not supported for SentencePiece ('llama') vocabularies (only 'default')",
        vocab->pre()));
  }
  return std::unique_ptr<Tokenizer>(new SpmTokenizer(std::move(vocab)));
}

}  // namespace les
