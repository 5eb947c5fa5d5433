// Byte-level BPE tokenizer for tokenizer.ggml.model = "gpt2".
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
// Decoding maps each character of a token back through the inverse map;
// characters outside the map are emitted as their UTF-8 bytes.
//
// Thread-safety: immutable after creation.
#pragma once

#include <memory>

#include "core/tokenizer/tokenizer.h"

namespace les {

// Errors: unsupported (pre-tokenizer not known, see pre_tokenizer.h).
Result<std::unique_ptr<Tokenizer>> create_bpe_tokenizer(std::shared_ptr<const Vocab> vocab);

}  // namespace les
