// The Jinja lexer: template source -> tokens, with Jinja2's whitespace rules.
//
// Follows Jinja2 3.1's lexer (jinja2/lexer.py) as transformers configures it:
//  - newlines (\r\n, \r, \n) become \n and one trailing newline is dropped
//    (keep_trailing_newline=False);
//  - `{%-`, `{{-`, `{#-` strip all whitespace before the tag; `-%}`, `-}}`,
//    `-#}` strip all whitespace after it;
//  - trim_blocks: the first newline after a block or comment tag is removed
//    (not after `+%}`);
//  - lstrip_blocks: spaces and tabs from the start of a line up to a block or
//    comment tag are removed (not for `{%+` nor for `{{`);
//  - `{% raw %}...{% endraw %}` is data;
//  - inside a tag, an end delimiter counts only when (), [] and {} are balanced.
// String literals are decoded as Python's "unicode-escape" codec does.
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace les::jinja {

enum class Tok : uint8_t {
  data,         // template text, printed as is
  var_begin,    // {{
  var_end,      // }}
  block_begin,  // {%
  block_end,    // %}
  name,
  string,       // text: the decoded literal
  integer,      // ival
  floating,     // fval
  op,           // text: + - * / // % ** ~ [ ] ( ) { } == != < <= > >= = . : | , ;
  eof,
};

struct Token {
  Tok type = Tok::eof;
  std::string text;
  int64_t ival = 0;
  double fval = 0.0;
  int line = 1;  // 1-based line of the token's start in the source
};

struct LexOptions {
  bool trim_blocks = true;   // transformers' apply_chat_template sets both
  bool lstrip_blocks = true;
};

// Tokens of `source`, ending with Tok::eof. Errors (format, "TemplateSyntaxError: ..."):
// an unexpected character, unbalanced brackets, an unterminated comment or raw
// block, a malformed string escape, an integer beyond 64 bits.
Result<std::vector<Token>> lex(std::string_view source, const LexOptions& options = {});

}  // namespace les::jinja
