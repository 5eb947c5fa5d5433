// Prompts as token ids for the subcommands that hold a conversation in one
// context (`les chat`, `les serve`): tokenizing a rendered chat prompt, and
// keeping the tokens the context already holds that a new prompt starts with,
// so only the rest is evaluated (the KV cache of the common prefix is reused).
//
// Thread-safety: tokenize_prompt() is thread-safe (les_tokenize); the others
// follow the context's rules (one thread at a time).
#pragma once

#include <les/les.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace les::tool {

// `text` as token ids, BOS added as the vocabulary requests (when add_bos)
// and control-token texts (<|im_start|>, ...) parsed when parse_special.
// Empty on failure (*status, when given, says why; the message is
// les_last_error()).
std::vector<les_token> tokenize_prompt(const les_model* model, const std::string_view text, bool parse_special,
                                       les_status* status = nullptr, bool add_bos = true);

// Every token the context holds (les_context_tokens; the pending one last).
std::vector<les_token> held_tokens(const les_context* ctx);

// Trims the context to the longest common prefix of what it holds and `ids`
// (never all of `ids`: at least one token is left to evaluate, so generation
// has fresh logits) and returns that prefix's length: generate from
// ids[keep..]. A model whose recurrent (linear-attention) state cannot go back
// to that position is reset instead (returns 0). `ids` must not be empty.
int32_t reuse_prefix(les_context* ctx, const std::vector<les_token>& ids);

}  // namespace les::tool
