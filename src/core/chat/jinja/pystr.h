// Python's str semantics on UTF-8 strings: code points, whitespace, case,
// strip/split/splitlines, repr(). Source: CPython 3.11 (Objects/unicodeobject.c
// and its documented behaviour); Unicode properties from utf8proc.
//
// Invalid UTF-8 never fails: each invalid byte is one code point in the
// U+DC80..U+DCFF range (Python's "surrogateescape") and is written back as the
// same byte, so strings round-trip unchanged.
//
// Case mapping is utf8proc's simple (one-to-one) mapping plus the one special
// case chat text meets (U+00DF ß upper-cases to "SS"); Python's other
// one-to-many mappings (ligatures, İ) differ.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace les::jinja::py {

std::u32string decode(std::string_view s);
std::string encode(std::u32string_view cps);
// Number of code points (Python's len()).
size_t length(std::string_view s);

// str.isspace() for one code point (also what the `\s` of Python's re matches).
bool is_space(char32_t c);
// str.isprintable() for one code point (repr() escapes the others).
bool is_printable(char32_t c);
bool is_alpha(char32_t c);
bool is_digit(char32_t c);       // str.isdigit(): Unicode decimal and digit numbers
bool is_decimal(char32_t c);     // str.isdecimal()
bool is_alnum(char32_t c);
bool is_word(char32_t c);        // re's \w: alphanumeric or '_'
bool is_line_break(char32_t c);  // what str.splitlines() splits at
char32_t to_upper(char32_t c);
char32_t to_lower(char32_t c);
bool is_upper_char(char32_t c);  // a cased upper-case or title-case letter
bool is_lower_char(char32_t c);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);  // first upper, rest lower
std::string title(std::string_view s);       // str.title(): letters after a non-letter upper
std::string swapcase(std::string_view s);
bool isupper(std::string_view s);  // has a cased character, and no lower-case one
bool islower(std::string_view s);

// str.strip/lstrip/rstrip: `chars` absent strips whitespace.
enum class StripSide { both, left, right };
std::string strip(std::string_view s, const std::optional<std::string>& chars, StripSide side = StripSide::both);

// str.split / rsplit: `sep` absent splits at runs of whitespace and drops empty
// parts; maxsplit < 0 is unlimited. An empty sep is a ValueError (caller checks).
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
// str.splitlines() (without the line ends).
std::vector<std::string> splitlines(std::string_view s);
// str.replace(old, new, count): count < 0 replaces all. An empty `old`
// inserts `repl` between code points, as Python does.
std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);

// Python's repr() of a str: quoted with ' (or " when it holds ' and no "),
// backslash escapes for the quote, \\, \t \n \r and non-printable code points.
std::string repr(std::string_view s);

// The code-point index range [start, stop) of Python's slice indices on a
// length-n sequence (None = nullopt), for step != 0; returns the indices taken.
std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                                   int64_t step);

}  // namespace les::jinja::py
