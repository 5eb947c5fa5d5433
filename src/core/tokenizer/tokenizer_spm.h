// SentencePiece-style tokenizer for tokenizer.ggml.model = "llama".
//
// Algorithm (SentencePiece BPE model, Kudo & Richardson 2018): the text gets a
// leading ' ' (add_space_prefix, at the start and after special tokens), every
// ' ' becomes U+2581 "▁", and the text is split into UTF-8 characters. Then,
// repeatedly, the adjacent pair whose concatenation is a vocabulary piece with
// the highest score is merged (ties: leftmost pair first). A final symbol that
// is not a piece is emitted as byte-fallback pieces "<0xNN>" (one per byte),
// or as the unk token when the vocabulary has no byte pieces.
//
// The pre-tokenizer must be "default" (or absent); anything else is refused.
// Thread-safety: immutable after creation.
#pragma once

#include <memory>

#include "core/tokenizer/tokenizer.h"

namespace les {

// Errors: unsupported (pre-tokenizer name other than "default").
Result<std::unique_ptr<Tokenizer>> create_spm_tokenizer(std::shared_ptr<const Vocab> vocab);

}  // namespace les
