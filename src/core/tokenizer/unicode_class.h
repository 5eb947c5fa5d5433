// Unicode classes of one code point, as the pre-tokenizers' regexes use them:
// \p{L}, \p{N}, \p{P}, \p{M}, \p{S} (general categories, from utf8proc's tables)
// and \s (the White_Space property of the Unicode Character Database, PropList.txt).
//
// The general categories follow the Unicode version of the linked utf8proc
// (Debian 12: utf8proc 2.8.0, Unicode 15.0). White_Space is a fixed list of 25
// code points, unchanged since Unicode 6.3 (U+180E left it then).
// llama.cpp 81ff7abe's own tables are Unicode 15.1; the only difference is the
// 627 code points assigned in 15.1 (U+2FFC..U+2FFF, U+31EF, CJK extension I
// U+2EBF0..U+2EE5D), unassigned (no class) here and S or L there.
//
// Thread-safety: pure functions over immutable tables; safe from any thread.
#pragma once

#include <cstdint>

namespace les {

inline constexpr uint32_t kCpLetter = 1u << 0;      // \p{L}: Lu, Ll, Lt, Lm, Lo
inline constexpr uint32_t kCpNumber = 1u << 1;      // \p{N}: Nd, Nl, No
inline constexpr uint32_t kCpPunct = 1u << 2;       // \p{P}: Pc, Pd, Ps, Pe, Pi, Pf, Po
inline constexpr uint32_t kCpWhitespace = 1u << 3;  // \s: the White_Space property
inline constexpr uint32_t kCpMark = 1u << 4;        // \p{M}: Mn, Mc, Me
inline constexpr uint32_t kCpSymbol = 1u << 5;      // \p{S}: Sm, Sc, Sk, So

// The kCp* flags of code point `cp` (0 = none of the classes: separators that
// are not White_Space, controls, format characters, unassigned ones). A value
// above U+10FFFF, a surrogate and an unassigned code point give 0. Never fails.
uint32_t unicode_class(char32_t cp) noexcept;

// Whether `cp` has the Unicode White_Space property (PropList.txt): U+0009..U+000D,
// U+0020, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_unicode_white_space(char32_t cp) noexcept;

// The simple lowercase mapping of `cp` (UnicodeData.txt field 13, from utf8proc),
// `cp` itself when it has none. Never fails.
char32_t unicode_to_lower(char32_t cp) noexcept;

}  // namespace les
