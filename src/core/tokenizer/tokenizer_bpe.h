// BPE tokenizer for tokenizer.ggml.model = "gpt2" (and "gemma4", whose
// pre-tokenizer is always "gemma4"; and "whitespace", which first cuts the
// text into the words between White_Space runs, drops the whitespace,
// lowercases the words unless tokenizer.ggml.normalizer.lowercase is false
// (the default for pre "whitespace"), and then encodes each word as below).
//
// Algorithm (GPT-2, Radford et al. 2019; Sennrich et al. 2016 for BPE): the
// pre-tokenizer named by tokenizer.ggml.pre splits the text into pieces; each
// byte of a piece becomes the symbol for that byte under GPT-2's reversible
// byte<->unicode map (printable bytes 0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF map to
// themselves, the other 68 bytes to U+0100.. in byte order, so ' ' is "Ġ").
// Then the adjacent pair with the lowest merge rank is merged, repeatedly
// (ties: leftmost first), and the final symbols are the token ids. A byte
// whose symbol is not in the vocabulary (some omit 0xC0, 0xC1, 0xF5-0xFF or
// control bytes) becomes the unk token, or an invalid_argument error from
// tokenize() when there is none. With
// ignore_merges (llama3) a piece that is itself a token is emitted directly.
//
// Pre-tokenizers without byte encoding (PreTokenizerTraits: gemma4,
// sarvam-moe, whitespace) make BPE run over the pieces' UTF-8 characters
// instead; a final symbol that is no token becomes the "<0xNN>" tokens of its
// bytes (a byte without one is skipped, as in llama.cpp). With escape_spaces
// ' ' is replaced by U+2581 before splitting; with newline_tokens (gemma4) a
// piece of only '\n' that is itself a token is emitted directly.
//
// Decoding maps each character of a token back through the inverse map;
// characters outside the map are emitted as their UTF-8 bytes. With
// escape_spaces a token's text is kept as it is except U+2581 -> ' '; a BYTE
// token "<0xNN>" decodes to its byte.
//
// Thread-safety: immutable after creation.
#pragma once

#include <memory>

#include "core/tokenizer/tokenizer.h"

namespace les {

// Errors: unsupported (pre-tokenizer not known, see pre_tokenizer.h).
Result<std::unique_ptr<Tokenizer>> create_bpe_tokenizer(std::shared_ptr<const Vocab> vocab);

}  // namespace les
