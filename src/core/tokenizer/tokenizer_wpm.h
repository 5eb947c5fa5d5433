// WordPiece tokenizer for tokenizer.ggml.model = "bert" (BERT-style embedding
// models), as llama.cpp runs it (LLAMA_VOCAB_TYPE_WPM).
//
// Algorithm (Wu et al. 2016, "Google's Neural Machine Translation System",
// section 4.1; the BERT normaliser of HF `tokenizers`):
//  1. Normalise and split into words, code point by code point:
//     - with strip_accents, each code point is replaced by the first code point
//       of its canonical decomposition (NFD), and marks (\p{M}) are dropped
//       (llama.cpp's approximation of NFD + accent removal: a Hangul syllable
//       becomes its leading consonant);
//     - White_Space ends the current word; NUL, U+FFFD (invalid UTF-8) and
//       other \p{C} characters are dropped;
//     - with lowercase, the simple lowercase mapping is applied;
//     - punctuation (\p{P}), ASCII symbols (\p{S} below U+007F) and CJK
//       ideographs (the BERT ranges) become one-character words.
//  2. Each word, prefixed with U+2581 "▁" (how llama.cpp's converter marks a
//     word start; "##" continuation pieces are stored without the prefix), is
//     covered left to right by the longest vocabulary piece at each position;
//     a word that cannot be covered becomes the unknown token.
// Unicode properties come from utf8proc (Debian libutf8proc-dev).
//
// Decoding turns "▁" back into ' ' and drops the leading one.
// Thread-safety: immutable after creation.
#pragma once

#include <memory>

#include "core/tokenizer/tokenizer.h"

namespace les {

// Errors: format (the vocabulary has no unknown token, which WordPiece needs).
Result<std::unique_ptr<Tokenizer>> create_wpm_tokenizer(std::shared_ptr<const Vocab> vocab);

// Step 1 above on its own (tests): the words of `text`.
std::vector<std::string> wpm_words(std::string_view text, bool lowercase, bool strip_accents);

}  // namespace les
