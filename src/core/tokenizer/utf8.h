// UTF-8 decoding helpers shared by the tokenizers and the streaming
// detokenizer.
//
// Source: RFC 3629 (UTF-8): 1-4 byte sequences, no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
//
// Invalid input never fails: a byte that does not start a valid sequence is
// reported as one "invalid" unit of length 1, so callers can keep the original
// bytes (byte-level BPE and SPM byte fallback encode them losslessly).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace les::utf8 {

// Replacement code point reported for an invalid byte.
inline constexpr char32_t kReplacement = 0xFFFD;

// One decoded unit: a code point and how many bytes of the input it used.
struct Decoded {
  char32_t cp = kReplacement;
  uint8_t len = 1;     // 1..4 bytes consumed; always >= 1
  bool valid = false;  // false: `cp` is kReplacement standing for one raw byte
};

// Decodes the unit starting at s[pos]. Precondition: pos < s.size().
Decoded decode(std::string_view s, size_t pos) noexcept;

// Appends the UTF-8 encoding of `cp` (U+FFFD for surrogates or > U+10FFFF).
void append(std::string& out, char32_t cp);

// Number of bytes the sequence starting with lead byte `b` claims (1..4), or 0
// if `b` cannot start a sequence (a continuation byte or 0xF8..0xFF).
size_t sequence_length(uint8_t b) noexcept;

// Length of the longest prefix of `s` that does not end inside an incomplete
// but so-far-valid multi-byte sequence. Bytes that can never become valid are
// part of the prefix (they are not held back). Used by the streaming
// detokenizer: at most 3 trailing bytes are held back.
size_t complete_prefix_length(std::string_view s) noexcept;

// True if all of `s` is valid UTF-8.
bool is_valid(std::string_view s) noexcept;

}  // namespace les::utf8
