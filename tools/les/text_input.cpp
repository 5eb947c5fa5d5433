// Prompt files and terminal-safe text; see text_input.h.
#include "les/text_input.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/tokenizer/utf8.h"

namespace les::tool {

Result<std::string> read_prompt_file(const std::string& path) {
  const bool std_in = path == "-";
  std::FILE* f = std_in ? stdin : std::fopen(path.c_str(), "rb");
  const std::string name = std_in ? std::string("standard input") : "'" + path + "'";
  if (f == nullptr) return io_error("cannot open prompt file " + name + ": " + std::strerror(errno));
  std::string text;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  if (!std_in) std::fclose(f);
  if (failed) return io_error("cannot read prompt file " + name + ": " + std::strerror(err));
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
