// Internal to the parser (parse_expr.cpp, parse_stmt.cpp): the Parser class.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/chat/jinja/ast.h"
#include "core/chat/jinja/error.h"
#include "core/chat/jinja/lexer.h"
#include "core/chat/jinja/parser.h"

namespace les::jinja::detail {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& toks) : t_(toks) {}

  Result<Body> parse_template();

  // Expressions (parse_expr.cpp).
  Result<ExprPtr> parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_end = {},
                              bool explicit_parens = false, bool simplified = false);
  Result<ExprPtr> parse_expression(bool with_condexpr = true);
  Result<ExprPtr> parse_or();
  Result<ExprPtr> parse_primary();
  Result<ExprPtr> parse_postfix(ExprPtr node);
  // Filters `| name(args)` applied to node (null: a filter block's chain).
  // start_inline: the first filter's name comes without a `|`.
  Result<ExprPtr> parse_filter(ExprPtr node, bool start_inline);
  Status parse_call_args(Expr& call);

  // Statements (parse_stmt.cpp).
  Status subparse(Body& out, std::initializer_list<std::string_view> end_tags);
  Result<StmtPtr> parse_statement();

  // Token access.
  const Token& cur() const { return t_[i_]; }
  const Token& look() const { return t_[i_ + 1 < t_.size() ? i_ + 1 : i_]; }
  void next() {
    if (i_ + 1 < t_.size()) ++i_;
  }
  bool is_op(std::string_view op) const { return cur().type == Tok::op && cur().text == op; }
  bool is_name(std::string_view n) const { return cur().type == Tok::name && cur().text == n; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(std::string_view n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  Status expect_op(std::string_view op);
  Status expect(Tok type, const char* what);
  Result<std::string> expect_name();
  Status fail(const std::string& msg) const { return syntax_error(msg, cur().line); }
  std::string describe() const;

  ExprPtr node(ExprKind kind, int line) const {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }

  // Nesting guard: Enter returns an error past kMaxParseDepth.
  Status enter() {
    if (++depth_ > kMaxParseDepth) return fail("nesting deeper than " + std::to_string(kMaxParseDepth) + " levels");
    return Status();
  }
  void leave() { --depth_; }

  int loop_depth_ = 0;  // for break / continue

 private:
  Result<ExprPtr> parse_and();
  Result<ExprPtr> parse_not();
  Result<ExprPtr> parse_compare();
  Result<ExprPtr> parse_math1();
  Result<ExprPtr> parse_concat();
  Result<ExprPtr> parse_math2();
  Result<ExprPtr> parse_pow();
  Result<ExprPtr> parse_unary(bool with_filter);
  Result<ExprPtr> parse_condexpr();
  Result<ExprPtr> parse_filter_expr(ExprPtr node);
  Result<ExprPtr> parse_test(ExprPtr node);
  Result<ExprPtr> parse_subscript(ExprPtr node);
  Result<ExprPtr> parse_subscribed();
  Result<ExprPtr> parse_list_or_dict(bool dict);

  const std::vector<Token>& t_;
  size_t i_ = 0;
  int depth_ = 0;
};

// Counts one level of nesting for its scope (Parser::enter / leave).
struct DepthGuard {
  explicit DepthGuard(Parser& p) : p(p), status(p.enter()) {}
  ~DepthGuard() { p.leave(); }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  Parser& p;
  Status status;
};

// Counts one level per operator applied in a loop (a + b + c nests a tree as
// deep as a parenthesised expression), released when the loop's function returns.
class LevelGuard {
 public:
  explicit LevelGuard(Parser& p) : p_(p) {}
  ~LevelGuard() {
    while (n_-- > 0) p_.leave();
  }
  LevelGuard(const LevelGuard&) = delete;
  LevelGuard& operator=(const LevelGuard&) = delete;
  Status push() {
    ++n_;
    return p_.enter();
  }

 private:
  Parser& p_;
  int n_ = 0;
};

// Jinja2's compile-time check of filter and test names: an unknown name is an
// error unless it sits in an `if` or a conditional expression (a "soft
// frame"), where it fails only when reached; marks Expr::soft accordingly.
Status check_names(Body& body);

}  // namespace les::jinja::detail
