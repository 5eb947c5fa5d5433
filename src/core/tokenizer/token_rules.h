// The token properties llama.cpp derives at load time from token texts and
// model names rather than from tokenizer.ggml.token_type (llama-vocab.cpp at
// the fixtures' commit), applied by Vocab::build so LES tokenizes and stops
// generating where llama.cpp does:
//  * control-looking texts: a token whose text is an end-of-generation marker
//    (<|im_end|>, </s>, <|endoftext|>, <end_of_turn>, <|eot_id|>, ...), or a
//    fill-in-the-middle marker whose tokenizer.ggml.fim_*_token_id key is
//    absent (<|fim_prefix|>, <PRE>, ...), becomes CONTROL: with
//    parse_special = false its text is plain text, and it renders as "" unless
//    special tokens are rendered. A warning names each token so changed.
//  * end of generation: the eos id plus every end-of-generation marker
//    present (two model-family exceptions: with <|return|> and <|call|>, or
//    <|calls|> and <|flush|>, <|end|> is an ordinary user-defined token; with
//    <|tool_response>, </s> is an ordinary token).
//  * strip flags: for a model whose general.name contains "phi-3" or "phi3",
//    every special token except <unk>, <s> and <|endoftext|> swallows the
//    whitespace after it (rstrip); <mask> (jina-v2 pre-tokenizers,
//    nomic-bert-moe / jina-bert-v3) and [MASK] ("modern-bert" names) swallow
//    the whitespace before them (lstrip).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace les {

// Bits of Vocab::strip(id).
inline constexpr uint8_t kStripLeft = 1;   // whitespace before the token is dropped
inline constexpr uint8_t kStripRight = 2;  // whitespace after the token is dropped

struct TokenRuleInputs {
  std::string name;          // general.name ("" if absent)
  std::string arch;          // general.architecture
  std::string pre;           // tokenizer.ggml.pre as written ("" if absent)
  bool fim_ids_given[6] = {};  // tokenizer.ggml.fim_{pre,suf,mid,pad,rep,sep}_token_id present
};

struct TokenRuleResult {
  std::vector<int32_t> eog;       // end-of-generation ids, ascending (eos first if present)
  std::vector<uint8_t> strip;     // per token: kStripLeft | kStripRight
  std::vector<std::string> warnings;
};

// Applies the rules to `types` (changed in place) of the tokens `texts`;
// `find` maps a text to its id (kNoToken if absent); `eos` may be kNoToken.
TokenRuleResult apply_token_rules(const TokenRuleInputs& in, const std::vector<std::string>& texts,
                                  std::vector<TokenType>& types, int32_t eos,
                                  const std::function<int32_t(std::string_view)>& find);

}  // namespace les
