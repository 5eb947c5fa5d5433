#include "core/tokenizer/unicode_class.h"

#include <array>

#include <utf8proc.h>

namespace les {

bool is_unicode_white_space(char32_t cp) noexcept {
  // PropList.txt, White_Space (Unicode 6.3 to 15.0 alike).
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  switch (cp) {
    case 0x0085: case 0x00A0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

namespace {

uint32_t classify_utf8proc(char32_t cp) noexcept {
  uint32_t f = 0;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
      f = kCpLetter;
      break;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      f = kCpNumber;
      break;
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS: case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF: case UTF8PROC_CATEGORY_PO:
      f = kCpPunct;
      break;
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
      f = kCpMark;
      break;
    case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SK: case UTF8PROC_CATEGORY_SO:
      f = kCpSymbol;
      break;
    default:
      break;
  }
  if (is_unicode_white_space(cp)) f |= kCpWhitespace;
  return f;
}

// The classes of U+0000..U+07FF (every 1- and 2-byte UTF-8 sequence), looked up
// once from utf8proc: ASCII and the Latin, Greek, Cyrillic, Hebrew and Arabic blocks,
// and a table read is cheaper than utf8proc's call and two-stage lookup.
constexpr char32_t kTableSize = 0x800;
using ClassTable = std::array<uint8_t, kTableSize>;

ClassTable make_table() noexcept {
  ClassTable t{};
  for (char32_t cp = 0; cp < kTableSize; ++cp) t[cp] = static_cast<uint8_t>(classify_utf8proc(cp));
  return t;
}

}  // namespace

uint32_t unicode_class(char32_t cp) noexcept {
  static const ClassTable table = make_table();  // immutable after the (thread-safe) first call
  if (cp < kTableSize) return table[cp];
  if (cp > 0x10FFFF) return 0;
  return classify_utf8proc(cp);
}

char32_t unicode_to_lower(char32_t cp) noexcept {
  if (cp > 0x10FFFF) return cp;
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

}  // namespace les
