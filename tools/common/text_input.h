// Prompt text from a file or standard input (`-f FILE`, `-f -`), as
// llama.cpp's tools read it: the whole file, with one trailing newline
// removed ("\n", or "\r\n") so that `echo text > f` prompts with "text".
//
// Thread-safety: reads the given stream; no shared state.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace les::tool {

// The most bytes a prompt file may hold: 64 MiB, some 16 million tokens of
// text, far more than any model's context (a longer input cannot be a
// prompt); perplexity and imatrix corpora of that size are hours of work.
// /dev/zero, a FIFO that never ends or a huge sparse file stop here.
inline constexpr uint64_t kMaxPromptFileBytes = 64ull << 20;

// The bytes of `path` ("-" = standard input until EOF) minus one trailing
// newline, at most kMaxPromptFileBytes (util/bounded_read.h; NUL bytes are
// kept: the text's length travels with it). Errors: io_error naming the path
// (missing, unreadable), invalid_argument (a directory, more than the limit).
Result<std::string> read_prompt_file(const std::string& path);

// Text that is valid UTF-8 for a terminal: each byte that is not part of a
// valid UTF-8 sequence becomes U+FFFD.
std::string valid_utf8(std::string_view s);

}  // namespace les::tool
