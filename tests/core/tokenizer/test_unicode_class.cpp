// unicode_class(): the \p{L} \p{N} \p{P} \p{M} \p{S} \s classes of the pre-tokenizers.
// Expected values are from the Unicode Character Database 15.0 (UnicodeData.txt
// general categories, PropList.txt White_Space), one or more code points of
// every general category and script family the BPE vocabularies meet.
#include <catch2/catch.hpp>

#include <cstdint>

#include "core/tokenizer/unicode_class.h"

using les::kCpLetter;
using les::kCpMark;
using les::kCpNumber;
using les::kCpPunct;
using les::kCpSymbol;
using les::kCpWhitespace;
using les::unicode_class;

TEST_CASE("letters: every L subcategory, several scripts", "[unicode_class]") {
  for (const char32_t cp : {U'A', U'z', U'\u00E9', U'\u01C5' /* Lt */, U'\u02B0' /* Lm */, U'\u05D0' /* Hebrew Lo */,
                            U'\u0628' /* Arabic */, U'\u0915' /* Devanagari */, U'\u3042' /* Hiragana */,
                            U'\u4E00' /* CJK */, U'\uAC00' /* Hangul */, U'\U00020000' /* CJK ext. B */,
                            U'\U0001D400' /* math bold A */}) {
    INFO(std::hex << static_cast<uint32_t>(cp));
    CHECK(unicode_class(cp) == kCpLetter);
  }
}

TEST_CASE("numbers: Nd, Nl, No", "[unicode_class]") {
  for (const char32_t cp : {U'0', U'9', U'\u0660' /* Arabic-Indic 0 */, U'\u0967' /* Devanagari 1 */,
                            U'\uFF10' /* fullwidth 0 */, U'\u2160' /* Nl roman I */, U'\u3007' /* Nl */,
                            U'\u00B2' /* No superscript 2 */, U'\u00BD' /* No 1/2 */, U'\u2460' /* No circled 1 */,
                            U'\U0001D7CE' /* math bold 0 */}) {
    INFO(std::hex << static_cast<uint32_t>(cp));
    CHECK(unicode_class(cp) == kCpNumber);
  }
}

TEST_CASE("punctuation: Pc Pd Ps Pe Pi Pf Po, and symbols are not P", "[unicode_class]") {
  for (const char32_t cp : {U'_', U'-', U'(', U')', U'\u00AB' /* Pi */, U'\u00BB' /* Pf */, U'!', U'\'', U'"', U',',
                            U'.', U'\u2014' /* em dash */, U'\u3001' /* ideographic comma */, U'\uFF01',
                            U'\u00BF'}) {
    INFO(std::hex << static_cast<uint32_t>(cp));
    CHECK(unicode_class(cp) == kCpPunct);
  }
  // Sm, Sc, Sk, So are \p{S}, not \p{P}.
  for (const char32_t cp : {U'+', U'<', U'$', U'^', U'`', U'|', U'~', U'\u20AC', U'\u00A9',
                            U'\U0001F600' /* emoji */, U'\u2713', U'\uFFFD'}) {
    INFO(std::hex << static_cast<uint32_t>(cp));
    CHECK(unicode_class(cp) == kCpSymbol);
  }
}

TEST_CASE("marks: Mn, Mc, Me", "[unicode_class]") {
  for (const char32_t cp : {U'\u0301' /* Mn */, U'\u0308', U'\u093F' /* Mc Devanagari */, U'\u0E34' /* Thai Mn */,
                            U'\u20DD' /* Me */, U'\u05B8' /* Hebrew point */}) {
    INFO(std::hex << static_cast<uint32_t>(cp));
    CHECK(unicode_class(cp) == kCpMark);
  }
}

TEST_CASE("format, control and separator characters have no class", "[unicode_class]") {
  for (const char32_t cp : {U'\u200B' /* ZWSP, Cf */, U'\uFEFF', U'\u200D', U'\u0001', U'\u001F', U'\uE000' /* Co */}) {
    INFO(std::hex << static_cast<uint32_t>(cp));
    CHECK(unicode_class(cp) == 0);
  }
}

TEST_CASE("simple lowercase mapping", "[unicode_class]") {
  CHECK(les::unicode_to_lower(U'S') == U's');
  CHECK(les::unicode_to_lower(U's') == U's');
  CHECK(les::unicode_to_lower(U'\u00C9') == U'\u00E9');
  CHECK(les::unicode_to_lower(U'\u0130') == U'i');  // the simple mapping of dotted capital I
  CHECK(les::unicode_to_lower(U'\u212A') == U'k');  // KELVIN SIGN
  CHECK(les::unicode_to_lower(U'1') == U'1');
  CHECK(les::unicode_to_lower(0x110000) == 0x110000);
}

TEST_CASE("White_Space: exactly the 25 code points of PropList.txt", "[unicode_class]") {
  for (const char32_t cp : {U'\t', U'\n', U'\v', U'\f', U'\r', U' ', U'\u0085', U'\u00A0', U'\u1680', U'\u2028',
                            U'\u2029', U'\u202F', U'\u205F', U'\u3000'}) {
    INFO(std::hex << static_cast<uint32_t>(cp));
    CHECK((unicode_class(cp) & kCpWhitespace) != 0);
  }
  for (char32_t cp = 0x2000; cp <= 0x200A; ++cp) CHECK((unicode_class(cp) & kCpWhitespace) != 0);
  // Not White_Space: the information separators U+001C..U+001F (C's isspace
  // differs here), U+180E (left White_Space in Unicode 6.3), U+200B, U+FEFF.
  for (const char32_t cp : {U'\u001C', U'\u001F', U'\u180E', U'\u200B', U'\uFEFF', U'\u0000'}) {
    INFO(std::hex << static_cast<uint32_t>(cp));
    CHECK((unicode_class(cp) & kCpWhitespace) == 0);
  }
  uint32_t n = 0;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) n += (unicode_class(cp) & kCpWhitespace) != 0 ? 1 : 0;
  CHECK(n == 25);
}

TEST_CASE("out of range, surrogates and unassigned code points have no class", "[unicode_class]") {
  CHECK(unicode_class(0x110000) == 0);
  CHECK(unicode_class(0xFFFFFFFF) == 0);
  CHECK(unicode_class(0xD800) == 0);
  CHECK(unicode_class(0xDFFF) == 0);
  CHECK(unicode_class(0x0378) == 0);  // unassigned (Greek block)
  CHECK(unicode_class(0x10FFFF) == 0);
}
