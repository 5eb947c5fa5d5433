// Type rules for well-known GGUF metadata keys that the rest of LES relies on
// (general.alignment, tokenizer.ggml.tokens, ...). Shared by the reader (which
// rejects a file that breaks them) and the writer (which refuses to write one).
//
// Source: GGUF specification (ggml docs/gguf.md), "Standardized key-value pairs".
// Thread-safety: pure functions over immutable tables.
#pragma once

#include <string_view>

#include "core/gguf/gguf_value.h"
#include "util/status.h"

namespace les::gguf {

// Checks `value` against the rule for `key`, if there is one:
//   general.alignment             UINT32, a non-zero power of two
//   general.architecture, general.name, tokenizer.ggml.model, tokenizer.ggml.pre   STRING
//   tokenizer.ggml.tokens, tokenizer.ggml.merges   ARRAY of STRING
//   tokenizer.ggml.scores         ARRAY of FLOAT32
//   tokenizer.ggml.token_type     ARRAY of INT32
// Returns format ("key 'general.alignment' = 3 is not a power of two") on a
// violation, OK for any other key.
Status check_well_known_key(std::string_view key, const Value& value);

}  // namespace les::gguf
