// A small SentencePiece-style (llama "SPM") vocabulary with byte fallback,
// learned by LES itself, so that a synthetic model has a real tokenizer
// without any downloaded file.
//
// Layout (the same as Llama's and the trained fixture's):
//   0 <unk> (UNKNOWN), 1 <s> (CONTROL, BOS), 2 </s> (CONTROL, EOS),
//   3..258 <0x00>..<0xFF> (BYTE), then NORMAL pieces: every character of the
//   training text, followed by the pieces produced by BPE merges.
// Whitespace is written as U+2581 ("▁") and each word carries it as a prefix,
// as SentencePiece does (add_space_prefix = true).
// Scores: a merge created at rank r scores -r (earlier merges win in the SPM
// tokenizer's highest-score-first bigram merging); single characters score
// below every merge. Special and byte pieces score 0.
//
// BPE learning (Sennrich et al. 2016): split the text into words, start from
// characters, repeatedly merge the most frequent adjacent pair (ties: the
// lexicographically smallest pair), until the vocabulary has n_vocab pieces or
// no pair occurs twice.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace les {

// GGUF `tokenizer.ggml.token_type` values used here (same numbering as
// les::TokenType in core/tokenizer/vocab.h and llama.cpp's llama_token_type).
namespace synth_token_type {
inline constexpr int32_t normal = 1, unknown = 2, control = 3, byte = 6;
}

struct SpmVocab {
  std::vector<std::string> tokens;  // piece text (UTF-8, "▁" for space); index = token id
  std::vector<float> scores;        // merge priority, higher merges first
  std::vector<int32_t> types;       // synth_token_type values
  int32_t unk_id = 0, bos_id = 1, eos_id = 2;
};

// Learns a vocabulary of at most `n_vocab` pieces from `text`.
// Errors: invalid_argument if n_vocab < 3 + 256 + (distinct characters of text)
// or the text is empty / not valid UTF-8.
Result<SpmVocab> learn_spm_vocab(std::string_view text, int32_t n_vocab);

// A few paragraphs of plain English written for LES, used as the default
// training text of the synthetic vocabulary (no fixture needed).
std::string_view default_vocab_text();

}  // namespace les
