// Test helper: a copy of a GGUF file with string keys added or replaced (for
// example a fixture model with a tokenizer.chat_template), written with LES's
// own GgufWriter. REQUIREs that every step succeeds.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace les::test {

// Writes `dst`: `src`'s keys (those named in `set` replaced) and tensors, plus
// the keys of `set` that `src` lacks.
void copy_gguf_with_strings(const std::string& src, const std::string& dst,
                            const std::vector<std::pair<std::string, std::string>>& set);

}  // namespace les::test
