// Prompt text from a file or standard input (`-f FILE`, `-f -`), as
// llama.cpp's tools read it: the whole file, with one trailing newline
// removed ("\n", or "\r\n") so that `echo text > f` prompts with "text".
//
// Thread-safety: reads the given stream; no shared state.
#pragma once

#include <string>

#include "util/status.h"

namespace les::tool {

// The bytes of `path` ("-" = standard input until EOF) minus one trailing
// newline. Errors: io_error naming the path (missing, unreadable, a directory).
Result<std::string> read_prompt_file(const std::string& path);

// Text that is valid UTF-8 for a terminal: each byte that is not part of a
// valid UTF-8 sequence becomes U+FFFD.
std::string valid_utf8(std::string_view s);

}  // namespace les::tool
