// Metadata that changes the math but that LES does not compute: found and
// named, so that no such key is ever ignored. docs/metadata.md is the table
// of every key llama.cpp 81ff7abe reads for LES's architectures and what LES
// does with it; this file implements its "refused" rows.
//
// Two kinds of key are checked, per architecture:
//  * keys llama.cpp reads and computes but LES does not (non-causal
//    attention, group-limited expert routing, NTK-alpha RoPE, SWA layers with
//    their own head sizes): refused unless they hold the value that changes
//    nothing;
//  * keys llama.cpp reads for other architectures but not for this one
//    (expert gating function, weight normalisation and scale, attention
//    scale, softcapping, sliding window, YaRN betas, ...): llama.cpp computes
//    the architecture's fixed semantics whatever they say, so a file whose
//    value contradicts them has no reference LES could match. Refused unless
//    the value is what llama.cpp assumes.
// Keys LES computes are validated where they are read (hparams.cpp,
// rope_config.cpp); keys without effect on logits (pooling, classifier
// labels, rope.scaling.finetuned, vocab_size, ...) are listed in the doc.
//
// Thread-safety: pure function of its inputs.
#pragma once

#include <string>
#include <vector>

#include "core/model/hparams.h"

namespace les {

namespace gguf {
class GgufFile;
}

// Every refused key of `f` for the architecture `hp` describes, one sentence
// each naming the key, its value and why ("metadata key
// 'qwen3moe.expert_gating_func' = 2 (sigmoid): ..."); empty when none.
std::vector<std::string> metadata_problems(const gguf::GgufFile& f, const Hparams& hp);

}  // namespace les
