// Continuing a chat with images by text (`les chat`, `les serve`).
//
// A text-only chat reuses the KV cache by token prefix (prompt_reuse.h); a
// conversation with images cannot: its image positions hold embedding rows,
// not tokens. It is continued by text instead. After a turn that ended at an
// end-of-generation token or the length limit, the context holds exactly the
// rendered conversation and the answer (HeldChat::text) with the answer's
// sampled tokens. The next turn's rendered conversation may continue it when
// it starts with that text, and a fresh evaluation of it would lay out every
// held position the same way: each piece of text between media markers is
// tokenized on its own (les_generate_with_images), so only the piece that
// spans the join matters. Its tokens in the context (the last piece's prompt
// tokens, then the sampled ones, then the new text's first piece tokenized on
// its own) must equal that whole piece tokenized at once. An answer whose
// sampled tokens are not how its text tokenizes (a split the tokenizer would
// not make, bytes that came back as U+FFFD) fails this, and the conversation
// is evaluated from the start: the answer is then what a fresh context gives.
//
// Thread-safety: the functions are thread-safe (les_tokenize); a HeldChat is
// a plain value.
#pragma once

#include <les/les.h>

#include <optional>
#include <string>
#include <vector>

namespace les::tool {

// What a context holds after a cleanly ended chat turn.
struct HeldChat {
  std::string text;              // rendered conversation + answer; empty: nothing known
  std::vector<les_token> tail;   // the context's tokens of text's last piece (after its last media marker)

  bool empty() const noexcept { return text.empty(); }
  void clear() noexcept {
    text.clear();
    tail.clear();
  }
};

// The HeldChat of `ctx` after a turn that evaluated `prompt` (rendered, with
// one LES_MEDIA_MARKER per image, or none) and delivered the tokens `sampled`
// whose text is `answer`. Call only for a turn that ended at EOS or the
// length limit (after a stop string the context holds the stop string's
// tokens too). The tail is checked against the context's own last tokens
// (les_context_tokens): empty when they differ (a tokenizer that treats a
// first piece differently) or tokenizing fails.
HeldChat held_after_turn(const les_model* model, const les_context* ctx, const std::string& prompt,
                         const std::string& answer, const std::vector<les_token>& sampled);

// The part of `text` (the next turn's rendered conversation) to evaluate after
// what the context holds, or nullopt when `text` does not continue `held` as
// the top of this header says (then evaluate it from the start).
std::optional<std::string> continuation_rest(const les_model* model, const HeldChat& held, const std::string& text);

}  // namespace les::tool
