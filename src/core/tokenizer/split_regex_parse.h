// The parser of SplitRegex patterns (split_regex.h lists the syntax): the
// pattern tree that split_regex_compile.cpp turns into a program. Internal to
// the tokenizer.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/tokenizer/split_regex.h"
#include "util/status.h"

namespace les::regex_tree {

inline constexpr uint32_t kUnbounded = UINT32_MAX;

// One node of a parsed pattern. Groups leave no node of their own; a
// lookahead of one set followed by a set is folded into their intersection.
struct Node {
  enum Kind : uint8_t { kEmpty, kSet, kSeq, kAlt, kRepeat, kLook, kNotLook, kBegin, kEnd, kWordB, kNotWordB };
  explicit Node(Kind k = kEmpty) : kind(k) {}
  Kind kind;
  SymbolSet set;              // kSet
  std::vector<Node> kids;     // kSeq, kAlt; kRepeat, kLook, kNotLook: one
  uint32_t min = 0, max = 0;  // kRepeat
};

// A parsed pattern and the symbol mode its text implies (\p{..} present or not).
struct Parsed {
  Node root;
  SymbolMode mode;
};

// Errors: invalid_argument naming the pattern and the position.
Result<Parsed> parse(std::string_view pattern);

}  // namespace les::regex_tree
