// Prompt files and terminal-safe text; see text_input.h.
#include "common/text_input.h"

#include "core/tokenizer/utf8.h"
#include "util/bounded_read.h"

namespace les::tool {

Result<std::string> read_prompt_file(const std::string& path) {
  BoundedRead r;
  r.what = "prompt file";
  r.max_bytes = kMaxPromptFileBytes;
  r.max_reason = "the limit of a prompt file";
  LES_ASSIGN_OR_RETURN(std::string text, read_bounded(path, r, /*allow_stdin=*/true));
  if (!text.empty() && text.back() == '\n') {
    text.pop_back();
    if (!text.empty() && text.back() == '\r') text.pop_back();
  }
  return text;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const utf8::Decoded d = utf8::decode(s, i);
    if (d.valid) out.append(s.substr(i, d.len));
    else utf8::append(out, utf8::kReplacement);
    i += d.len;
  }
  return out;
}

}  // namespace les::tool
