// The parsed form of a Jinja template: expression and statement trees.
//
// One node struct per level with a kind and generic child lists keeps the
// tree small; the layout each kind uses is listed at its enum value. The tree
// is immutable after parsing and may be rendered by several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/chat/jinja/value.h"

namespace les::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind : uint8_t {
  literal,  // value
  name,     // name
  getattr,  // args[0].name
  getitem,  // args[0][args[1]]; args[1] may be a slice
  slice,    // args[0..2]: start, stop, step (each may be null); only as a getitem key
  call,     // args[0](args[1..], kwargs, *star_args, **star_kwargs)
  filter,   // args[0] | name(args[1..], kwargs); args[0] is null in a filter block's chain
  test,     // args[0] is name(args[1..], kwargs)
  neg,      // -args[0]
  pos,      // +args[0]
  not_,     // not args[0]
  binary,   // args[0] op args[1]
  and_,     // args[0] and args[1]
  or_,      // args[0] or args[1]
  compare,  // args[0] cmp[0] args[1] cmp[1] args[2] ... (chained like Python)
  concat,   // args[0] ~ args[1] ~ ...
  cond,     // args[1] if args[0] else args[2] (args[2] may be null)
  list,     // [args...]
  tuple,    // (args...)
  dict,     // {args[0]: args[1], args[2]: args[3], ...}
};

enum class BinOp : uint8_t { add, sub, mul, div, floordiv, mod, pow };
enum class CmpOp : uint8_t { eq, ne, lt, le, gt, ge, in, not_in };

struct Expr {
  ExprKind kind = ExprKind::literal;
  int line = 0;
  Value value;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  ExprPtr star_args, star_kwargs;
  BinOp op = BinOp::add;
  std::vector<CmpOp> cmp;
  // filter / test: inside an `if` or a conditional expression, where Jinja2
  // reports an unknown name only when it is reached.
  bool soft = false;
};

enum class StmtKind : uint8_t {
  text,          // text
  print,         // {{ exprs[0] }}
  if_,           // exprs[i]: the if / elif tests; bodies[i] their bodies; bodies[n] the else (optional)
  for_,          // for exprs[0] in exprs[1] if exprs[2] (may be null) [recursive]; bodies[0] body, bodies[1] else
  set,           // set exprs[0] = exprs[1]; exprs[0]: name, tuple of names, or getattr of a name (namespace)
  set_block,     // set exprs[0] [| exprs[1] filter chain] ... endset; bodies[0]
  macro,         // macro name(params) with exprs[i] the default of params[i] (or null); bodies[0]
  call_block,    // call(params) exprs[0] ... endcall; defaults in exprs[1..]; bodies[0] is `caller`
  filter_block,  // filter exprs[0] (a chain whose innermost input is null) ... endfilter; bodies[0]
  with,          // with exprs[0] = exprs[1], exprs[2] = exprs[3], ...; bodies[0]
  scope,         // a body in its own scope (transformers' {% generation %} block)
  break_,
  continue_,
};

struct Stmt {
  StmtKind kind = StmtKind::text;
  int line = 0;
  std::string text;
  std::vector<ExprPtr> exprs;
  std::vector<Body> bodies;
  std::string name;
  std::vector<std::string> params;
  bool recursive = false;   // for: `recursive`
  bool has_else = false;    // if: bodies.back() is the else branch
  // macro / call_block: whether the body reads `varargs`, `kwargs`, `caller`
  // (Jinja2 accepts extra arguments only then).
  bool uses_varargs = false, uses_kwargs = false, uses_caller = false;
};

}  // namespace les::jinja
