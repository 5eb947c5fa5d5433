// The tables behind PreTokenizer (pre_tokenizer.h): llama.cpp's pre-tokenizer
// types as stage lists, and every accepted tokenizer.ggml.pre name with its
// type and traits. Definitions and sources: pre_tokenizer_names.cpp.
//
// Thread-safety: the tables are built once (function-local statics) and never change.
#pragma once

#include <string>
#include <vector>

#include "core/tokenizer/pre_tokenizer.h"

namespace les {

// One stage: a hand-written splitter, or else a pattern (split_regex.h).
struct StageDef {
  CustomSplit custom = nullptr;
  std::string pattern;
};

struct TypeDef {
  const char* type;
  std::vector<StageDef> stages;
};

struct NameDef {
  const char* name;
  const char* type;  // a TypeDef::type
  PreTokenizerTraits traits;
};

const std::vector<TypeDef>& pre_tokenizer_types();
// In llama.cpp's order (llama_vocab::impl::load).
const std::vector<NameDef>& pre_tokenizer_name_table();

}  // namespace les
