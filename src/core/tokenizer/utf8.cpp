#include "core/tokenizer/utf8.h"

namespace les::utf8 {

namespace {
bool is_cont(uint8_t b) noexcept { return (b & 0xC0) == 0x80; }

// Valid range of the second byte given the lead byte (RFC 3629 table, which
// excludes overlongs and surrogates).
void second_byte_range(uint8_t lead, uint8_t& lo, uint8_t& hi) noexcept {
  lo = 0x80;
  hi = 0xBF;
  if (lead == 0xE0) lo = 0xA0;
  if (lead == 0xED) hi = 0x9F;
  if (lead == 0xF0) lo = 0x90;
  if (lead == 0xF4) hi = 0x8F;
}
}  // namespace

size_t sequence_length(uint8_t b) noexcept {
  if (b < 0x80) return 1;
  if (b < 0xC2) return 0;  // continuation byte or overlong lead C0/C1
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  if (b < 0xF5) return 4;
  return 0;
}

Decoded decode(std::string_view s, size_t pos) noexcept {
  Decoded d;
  const auto b0 = static_cast<uint8_t>(s[pos]);
  const size_t n = sequence_length(b0);
  if (n == 1) return {static_cast<char32_t>(b0), 1, true};
  if (n == 0 || pos + n > s.size()) return d;
  uint8_t lo, hi;
  second_byte_range(b0, lo, hi);
  const auto b1 = static_cast<uint8_t>(s[pos + 1]);
  if (b1 < lo || b1 > hi) return d;
  char32_t cp = (n == 2) ? (b0 & 0x1F) : (n == 3) ? (b0 & 0x0F) : (b0 & 0x07);
  cp = (cp << 6) | (b1 & 0x3F);
  for (size_t k = 2; k < n; ++k) {
    const auto b = static_cast<uint8_t>(s[pos + k]);
    if (!is_cont(b)) return d;
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, static_cast<uint8_t>(n), true};
}

void append(std::string& out, char32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = kReplacement;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t complete_prefix_length(std::string_view s) noexcept {
  // Look at the last (up to 3) bytes for a lead byte whose sequence is
  // incomplete but whose bytes so far are valid.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const size_t pos = n - back;
    const auto b = static_cast<uint8_t>(s[pos]);
    if (is_cont(b)) continue;  // keep looking for the lead byte
    const size_t need = sequence_length(b);
    if (need <= back) return n;  // complete (or invalid: not held back)
    // Check the bytes we have are a valid beginning.
    if (back >= 2) {
      uint8_t lo, hi;
      second_byte_range(b, lo, hi);
      const auto b1 = static_cast<uint8_t>(s[pos + 1]);
      if (b1 < lo || b1 > hi) return n;
    }
    return pos;
  }
  return n;
}

bool is_valid(std::string_view s) noexcept {
  for (size_t i = 0; i < s.size();) {
    const Decoded d = decode(s, i);
    if (!d.valid) return false;
    i += d.len;
  }
  return true;
}

}  // namespace les::utf8
