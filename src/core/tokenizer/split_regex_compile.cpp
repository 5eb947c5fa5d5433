// SplitRegex::compile: emits the backtracking program of a parsed pattern
// (split_regex_parse.h).
#include "core/tokenizer/split_regex.h"
#include "core/tokenizer/split_regex_parse.h"

namespace les {

using regex_tree::kUnbounded;
using regex_tree::Node;

// Emits the program of a parsed pattern into a SplitRegex (a friend).
class RegexCompiler {
 public:
  explicit RegexCompiler(SplitRegex& re) : re_(re) {}

  void emit_all(const Node& root) {
    emit(root);
    push(SplitRegex::Op::kMatch);
    const First f = first(root);
    re_.any_start_ = f.opaque || f.nullable;
    re_.first_ = f.set;
  }

 private:
  using Op = SplitRegex::Op;

  uint32_t push(Op op, uint32_t a = 0, uint32_t b = 0) {
    re_.prog_.push_back(SplitRegex::Inst{op, a, b});
    return static_cast<uint32_t>(re_.prog_.size() - 1);
  }
  uint32_t here() const { return static_cast<uint32_t>(re_.prog_.size()); }

  uint32_t set_index(const SymbolSet& s) {
    for (size_t i = 0; i < re_.sets_.size(); ++i) {
      if (re_.sets_[i] == s) return static_cast<uint32_t>(i);
    }
    re_.sets_.push_back(s);
    return static_cast<uint32_t>(re_.sets_.size() - 1);
  }

  void emit(const Node& n) {
    switch (n.kind) {
      case Node::kEmpty:
        break;
      case Node::kSet:
        push(Op::kSet, set_index(n.set));
        break;
      case Node::kSeq:
        for (const Node& k : n.kids) emit(k);
        break;
      case Node::kAlt: {
        std::vector<uint32_t> jumps;
        for (size_t i = 0; i + 1 < n.kids.size(); ++i) {
          const uint32_t split = push(Op::kSplit);
          re_.prog_[split].a = here();
          emit(n.kids[i]);
          jumps.push_back(push(Op::kJmp));
          re_.prog_[split].b = here();
        }
        emit(n.kids.back());
        for (const uint32_t j : jumps) re_.prog_[j].a = here();
        break;
      }
      case Node::kRepeat:
        emit_repeat(n);
        break;
      case Node::kLook:
      case Node::kNotLook: {
        const uint32_t look = push(n.kind == Node::kLook ? Op::kLook : Op::kNotLook);
        emit(n.kids[0]);
        push(Op::kMatch);
        re_.prog_[look].b = here();
        break;
      }
      case Node::kBegin:
        push(Op::kBegin);
        break;
      case Node::kEnd:
        push(Op::kEnd);
        break;
      case Node::kWordB:
        push(Op::kWordB);
        break;
      case Node::kNotWordB:
        push(Op::kNotWordB);
        break;
    }
  }

  void emit_repeat(const Node& n) {
    const Node& body = n.kids[0];
    if (body.kind == Node::kSet) {
      const uint32_t r = push(Op::kRun, set_index(body.set));
      re_.prog_[r].min = n.min;
      re_.prog_[r].max = n.max;
      return;
    }
    for (uint32_t i = 0; i < n.min; ++i) emit(body);
    if (n.max == kUnbounded) {
      const uint32_t loop = push(Op::kSplit);
      re_.prog_[loop].a = here();
      emit(body);
      push(Op::kJmp, loop);
      re_.prog_[loop].b = here();
      return;
    }
    std::vector<uint32_t> splits;
    for (uint32_t i = n.min; i < n.max; ++i) {
      const uint32_t split = push(Op::kSplit);
      re_.prog_[split].a = here();
      splits.push_back(split);
      emit(body);
    }
    for (const uint32_t s : splits) re_.prog_[s].b = here();
  }

  // The symbols a non-empty match of `n` can begin with.
  struct First {
    SymbolSet set;
    bool nullable = false;  // can match the empty string
    bool opaque = false;    // begins with an assertion whose effect the set cannot express
  };

  static First first(const Node& n) {
    First f;
    switch (n.kind) {
      case Node::kSet:
        f.set = n.set;
        return f;
      case Node::kSeq:
        f.nullable = true;
        for (const Node& k : n.kids) {
          const First g = first(k);
          f.set.add(g.set);
          f.opaque = f.opaque || g.opaque;
          if (!g.nullable) {
            f.nullable = false;
            break;
          }
        }
        return f;
      case Node::kAlt:
        for (const Node& k : n.kids) {
          const First g = first(k);
          f.set.add(g.set);
          f.nullable = f.nullable || g.nullable;
          f.opaque = f.opaque || g.opaque;
        }
        return f;
      case Node::kRepeat:
        f = first(n.kids[0]);
        f.nullable = f.nullable || n.min == 0;
        return f;
      case Node::kLook:
      case Node::kNotLook:
      case Node::kBegin:
      case Node::kWordB:
      case Node::kNotWordB:
        f.nullable = true;
        f.opaque = true;
        return f;
      case Node::kEnd:
      case Node::kEmpty:
        f.nullable = true;
        return f;
    }
    return f;
  }

  SplitRegex& re_;
};

Result<SplitRegex> SplitRegex::compile(std::string_view pattern) {
  LES_ASSIGN_OR_RETURN(regex_tree::Parsed parsed, regex_tree::parse(pattern));
  SplitRegex re;
  re.pattern_ = std::string(pattern);
  re.mode_ = parsed.mode;
  RegexCompiler(re).emit_all(parsed.root);
  return re;
}

}  // namespace les
