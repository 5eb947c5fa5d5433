// The Jinja parser, expressions (parser.h). Mirrors jinja2/parser.py's
// precedence: condexpr < or < and < not < compare < + - < ~ < * / // % < ** <
// unary - + < primary with postfix (. [] ()) and filters / tests.
#include <array>

#include "core/chat/jinja/parser_impl.h"

namespace les::jinja::detail {
namespace {

ExprPtr binary(Parser& p, ExprKind kind, ExprPtr l, ExprPtr r, int line) {
  ExprPtr e = p.node(kind, line);
  e->args.push_back(std::move(l));
  e->args.push_back(std::move(r));
  return e;
}

}  // namespace

std::string Parser::describe() const {
  switch (cur().type) {
    case Tok::eof: return "end of template";
    case Tok::var_end: return "end of print statement";
    case Tok::block_end: return "end of statement block";
    case Tok::var_begin: return "begin of print statement";
    case Tok::block_begin: return "begin of statement block";
    case Tok::data: return "template data";
    case Tok::integer: return std::to_string(cur().ival);
    case Tok::floating: return "float";
    case Tok::string: return "string";
    default: return cur().text;
  }
}

Status Parser::expect_op(std::string_view op) {
  if (skip_op(op)) return Status();
  return fail("expected token '" + std::string(op) + "', got '" + describe() + "'");
}

Status Parser::expect(Tok type, const char* what) {
  if (cur().type == type) {
    next();
    return Status();
  }
  return fail(std::string("expected ") + what + ", got '" + describe() + "'");
}

Result<std::string> Parser::expect_name() {
  if (cur().type != Tok::name) return fail("expected name, got '" + describe() + "'");
  std::string n = cur().text;
  next();
  return n;
}

Result<ExprPtr> Parser::parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_end,
                                    bool explicit_parens, bool simplified) {
  const int line = cur().line;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) LES_RETURN_IF_ERROR(expect_op(","));
    bool end = cur().type == Tok::var_end || cur().type == Tok::block_end || is_op(")");
    for (std::string_view n : extra_end) end = end || is_name(n);
    if (end) break;
    LES_ASSIGN_OR_RETURN(ExprPtr e, simplified ? parse_primary() : parse_expression(with_condexpr));
    items.push_back(std::move(e));
    if (!is_op(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) return fail("Expected an expression, got '" + describe() + "'");
  }
  ExprPtr t = node(ExprKind::tuple, line);
  t->args = std::move(items);
  return t;
}

Result<ExprPtr> Parser::parse_expression(bool with_condexpr) {
  return with_condexpr ? parse_condexpr() : parse_or();
}

Result<ExprPtr> Parser::parse_condexpr() {
  int line = cur().line;
  LES_ASSIGN_OR_RETURN(ExprPtr expr1, parse_or());
  while (skip_name("if")) {
    ExprPtr c = node(ExprKind::cond, line);
    LES_ASSIGN_OR_RETURN(ExprPtr test, parse_or());
    ExprPtr other;
    if (skip_name("else")) {
      LES_ASSIGN_OR_RETURN(other, parse_condexpr());
    }
    c->args.push_back(std::move(test));
    c->args.push_back(std::move(expr1));
    c->args.push_back(std::move(other));
    expr1 = std::move(c);
    line = cur().line;
  }
  return expr1;
}

Result<ExprPtr> Parser::parse_or() {
  LevelGuard levels(*this);
  LES_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
  while (is_name("or")) {
    LES_RETURN_IF_ERROR(levels.push());
    const int line = cur().line;
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
    left = binary(*this, ExprKind::or_, std::move(left), std::move(right), line);
  }
  return left;
}

Result<ExprPtr> Parser::parse_and() {
  LevelGuard levels(*this);
  LES_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
  while (is_name("and")) {
    LES_RETURN_IF_ERROR(levels.push());
    const int line = cur().line;
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
    left = binary(*this, ExprKind::and_, std::move(left), std::move(right), line);
  }
  return left;
}

Result<ExprPtr> Parser::parse_not() {
  if (is_name("not")) {
    DepthGuard g(*this);
    LES_RETURN_IF_ERROR(g.status);
    ExprPtr n = node(ExprKind::not_, cur().line);
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr inner, parse_not());
    n->args.push_back(std::move(inner));
    return n;
  }
  return parse_compare();
}

Result<ExprPtr> Parser::parse_compare() {
  const int line = cur().line;
  LES_ASSIGN_OR_RETURN(ExprPtr first, parse_math1());
  ExprPtr cmp;
  while (true) {
    CmpOp op;
    if (is_op("==")) op = CmpOp::eq;
    else if (is_op("!=")) op = CmpOp::ne;
    else if (is_op("<")) op = CmpOp::lt;
    else if (is_op("<=")) op = CmpOp::le;
    else if (is_op(">")) op = CmpOp::gt;
    else if (is_op(">=")) op = CmpOp::ge;
    else if (is_name("in")) op = CmpOp::in;
    else if (is_name("not") && look().type == Tok::name && look().text == "in") {
      next();
      op = CmpOp::not_in;
    } else {
      break;
    }
    next();
    if (!cmp) {
      cmp = node(ExprKind::compare, line);
      cmp->args.push_back(std::move(first));
    }
    LES_ASSIGN_OR_RETURN(ExprPtr operand, parse_math1());
    cmp->args.push_back(std::move(operand));
    cmp->cmp.push_back(op);
  }
  return cmp ? std::move(cmp) : std::move(first);
}

Result<ExprPtr> Parser::parse_math1() {
  LevelGuard levels(*this);
  LES_ASSIGN_OR_RETURN(ExprPtr left, parse_concat());
  while (is_op("+") || is_op("-")) {
    LES_RETURN_IF_ERROR(levels.push());
    ExprPtr b = node(ExprKind::binary, cur().line);
    b->op = is_op("+") ? BinOp::add : BinOp::sub;
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr right, parse_concat());
    b->args.push_back(std::move(left));
    b->args.push_back(std::move(right));
    left = std::move(b);
  }
  return left;
}

Result<ExprPtr> Parser::parse_concat() {
  const int line = cur().line;
  LES_ASSIGN_OR_RETURN(ExprPtr first, parse_math2());
  if (!is_op("~")) return first;
  ExprPtr c = node(ExprKind::concat, line);
  c->args.push_back(std::move(first));
  while (skip_op("~")) {
    LES_ASSIGN_OR_RETURN(ExprPtr e, parse_math2());
    c->args.push_back(std::move(e));
  }
  return c;
}

Result<ExprPtr> Parser::parse_math2() {
  LevelGuard levels(*this);
  LES_ASSIGN_OR_RETURN(ExprPtr left, parse_pow());
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    LES_RETURN_IF_ERROR(levels.push());
    ExprPtr b = node(ExprKind::binary, cur().line);
    b->op = is_op("*") ? BinOp::mul : is_op("/") ? BinOp::div : is_op("//") ? BinOp::floordiv : BinOp::mod;
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr right, parse_pow());
    b->args.push_back(std::move(left));
    b->args.push_back(std::move(right));
    left = std::move(b);
  }
  return left;
}

Result<ExprPtr> Parser::parse_pow() {
  LevelGuard levels(*this);
  LES_ASSIGN_OR_RETURN(ExprPtr left, parse_unary(true));
  while (is_op("**")) {
    LES_RETURN_IF_ERROR(levels.push());
    ExprPtr b = node(ExprKind::binary, cur().line);
    b->op = BinOp::pow;
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr right, parse_unary(true));
    b->args.push_back(std::move(left));
    b->args.push_back(std::move(right));
    left = std::move(b);
  }
  return left;
}

Result<ExprPtr> Parser::parse_unary(bool with_filter) {
  DepthGuard g(*this);
  LES_RETURN_IF_ERROR(g.status);
  ExprPtr n;
  if (is_op("-") || is_op("+")) {
    n = node(is_op("-") ? ExprKind::neg : ExprKind::pos, cur().line);
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr inner, parse_unary(false));
    n->args.push_back(std::move(inner));
  } else {
    LES_ASSIGN_OR_RETURN(n, parse_primary());
  }
  LES_ASSIGN_OR_RETURN(n, parse_postfix(std::move(n)));
  if (with_filter) {
    LES_ASSIGN_OR_RETURN(n, parse_filter_expr(std::move(n)));
  }
  return n;
}

Result<ExprPtr> Parser::parse_primary() {
  DepthGuard g(*this);
  LES_RETURN_IF_ERROR(g.status);
  const Token& t = cur();
  ExprPtr n = node(ExprKind::literal, t.line);
  switch (t.type) {
    case Tok::name:
      if (t.text == "true" || t.text == "True") n->value = Value(true);
      else if (t.text == "false" || t.text == "False") n->value = Value(false);
      else if (t.text == "none" || t.text == "None") n->value = Value::none();
      else {
        n->kind = ExprKind::name;
        n->name = t.text;
      }
      next();
      return n;
    case Tok::string: {
      std::string s;
      while (cur().type == Tok::string) {
        s += cur().text;
        next();
      }
      n->value = Value(std::move(s));
      return n;
    }
    case Tok::integer: n->value = Value(t.ival); next(); return n;
    case Tok::floating: n->value = Value(t.fval); next(); return n;
    case Tok::op:
      if (t.text == "(") {
        next();
        LES_ASSIGN_OR_RETURN(ExprPtr inner, parse_tuple(true, {}, true));
        LES_RETURN_IF_ERROR(expect_op(")"));
        return inner;
      }
      if (t.text == "[") return parse_list_or_dict(false);
      if (t.text == "{") return parse_list_or_dict(true);
      break;
    default: break;
  }
  return fail("unexpected '" + describe() + "'");
}

Result<ExprPtr> Parser::parse_list_or_dict(bool dict) {
  ExprPtr n = node(dict ? ExprKind::dict : ExprKind::list, cur().line);
  next();
  const char* close = dict ? "}" : "]";
  while (!is_op(close)) {
    if (!n->args.empty()) LES_RETURN_IF_ERROR(expect_op(","));
    if (is_op(close)) break;
    LES_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
    n->args.push_back(std::move(item));
    if (dict) {
      LES_RETURN_IF_ERROR(expect_op(":"));
      LES_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      n->args.push_back(std::move(value));
    }
  }
  LES_RETURN_IF_ERROR(expect_op(close));
  return n;
}

Result<ExprPtr> Parser::parse_postfix(ExprPtr n) {
  LevelGuard levels(*this);
  while (true) {
    if (is_op(".") || is_op("[") || is_op("(")) LES_RETURN_IF_ERROR(levels.push());
    if (is_op(".") || is_op("[")) {
      LES_ASSIGN_OR_RETURN(n, parse_subscript(std::move(n)));
    } else if (is_op("(")) {
      ExprPtr call = node(ExprKind::call, cur().line);
      call->args.push_back(std::move(n));
      LES_RETURN_IF_ERROR(parse_call_args(*call));
      n = std::move(call);
    } else {
      return n;
    }
  }
}

Result<ExprPtr> Parser::parse_filter_expr(ExprPtr n) {
  LevelGuard levels(*this);
  while (true) {
    if (is_op("|") || is_name("is") || is_op("(")) LES_RETURN_IF_ERROR(levels.push());
    if (is_op("|")) {
      LES_ASSIGN_OR_RETURN(n, parse_filter(std::move(n), false));
    } else if (is_name("is")) {
      LES_ASSIGN_OR_RETURN(n, parse_test(std::move(n)));
    } else if (is_op("(")) {
      ExprPtr call = node(ExprKind::call, cur().line);
      call->args.push_back(std::move(n));
      LES_RETURN_IF_ERROR(parse_call_args(*call));
      n = std::move(call);
    } else {
      return n;
    }
  }
}

Result<ExprPtr> Parser::parse_subscript(ExprPtr n) {
  const int line = cur().line;
  if (skip_op(".")) {
    if (cur().type == Tok::name) {
      ExprPtr g = node(ExprKind::getattr, line);
      g->name = cur().text;
      g->args.push_back(std::move(n));
      next();
      return g;
    }
    if (cur().type != Tok::integer) return fail("expected name or number");
    ExprPtr g = node(ExprKind::getitem, line);
    g->args.push_back(std::move(n));
    ExprPtr key = node(ExprKind::literal, line);
    key->value = Value(cur().ival);
    g->args.push_back(std::move(key));
    next();
    return g;
  }
  next();  // [
  std::vector<ExprPtr> keys;
  while (!is_op("]")) {
    if (!keys.empty()) LES_RETURN_IF_ERROR(expect_op(","));
    LES_ASSIGN_OR_RETURN(ExprPtr k, parse_subscribed());
    keys.push_back(std::move(k));
  }
  LES_RETURN_IF_ERROR(expect_op("]"));
  ExprPtr g = node(ExprKind::getitem, line);
  g->args.push_back(std::move(n));
  if (keys.size() == 1) {
    g->args.push_back(std::move(keys[0]));
  } else {
    ExprPtr t = node(ExprKind::tuple, line);
    t->args = std::move(keys);
    g->args.push_back(std::move(t));
  }
  return g;
}

Result<ExprPtr> Parser::parse_subscribed() {
  const int line = cur().line;
  ExprPtr s = node(ExprKind::slice, line);
  if (skip_op(":")) {
    s->args.push_back(nullptr);
  } else {
    LES_ASSIGN_OR_RETURN(ExprPtr e, parse_expression());
    if (!skip_op(":")) return e;
    s->args.push_back(std::move(e));
  }
  auto part = [&]() -> Result<ExprPtr> {
    if (is_op("]") || is_op(",") || is_op(":")) return ExprPtr();
    return parse_expression();
  };
  LES_ASSIGN_OR_RETURN(ExprPtr stop, part());
  s->args.push_back(std::move(stop));
  ExprPtr step;
  if (skip_op(":")) {
    LES_ASSIGN_OR_RETURN(step, part());
  }
  s->args.push_back(std::move(step));
  return s;
}

Status Parser::parse_call_args(Expr& call) {
  const int line = cur().line;
  LES_RETURN_IF_ERROR(expect_op("("));
  bool require_comma = false;
  auto invalid = [&] { return syntax_error("invalid syntax for function call expression", line); };
  while (!is_op(")")) {
    if (require_comma) {
      LES_RETURN_IF_ERROR(expect_op(","));
      if (is_op(")")) break;
    }
    if (skip_op("*")) {
      if (call.star_args || call.star_kwargs) return invalid();
      LES_ASSIGN_OR_RETURN(call.star_args, parse_expression());
    } else if (skip_op("**")) {
      if (call.star_kwargs) return invalid();
      LES_ASSIGN_OR_RETURN(call.star_kwargs, parse_expression());
    } else if (cur().type == Tok::name && look().type == Tok::op && look().text == "=") {
      if (call.star_kwargs) return invalid();
      std::string key = cur().text;
      next();
      next();
      LES_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      call.kwargs.emplace_back(std::move(key), std::move(value));
    } else {
      if (call.star_args || call.star_kwargs || !call.kwargs.empty()) return invalid();
      LES_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      call.args.push_back(std::move(value));
    }
    require_comma = true;
  }
  return expect_op(")");
}

Result<ExprPtr> Parser::parse_filter(ExprPtr n, bool start_inline) {
  LevelGuard levels(*this);
  while (is_op("|") || start_inline) {
    LES_RETURN_IF_ERROR(levels.push());
    if (!start_inline) next();
    start_inline = false;
    const int line = cur().line;
    LES_ASSIGN_OR_RETURN(std::string name, expect_name());
    while (skip_op(".")) {
      LES_ASSIGN_OR_RETURN(std::string part, expect_name());
      name += "." + part;
    }
    ExprPtr f = node(ExprKind::filter, line);
    f->name = std::move(name);
    f->args.push_back(std::move(n));
    if (is_op("(")) LES_RETURN_IF_ERROR(parse_call_args(*f));
    n = std::move(f);
  }
  return n;
}

Result<ExprPtr> Parser::parse_test(ExprPtr n) {
  const int line = cur().line;
  next();  // is
  const bool negated = skip_name("not");
  LES_ASSIGN_OR_RETURN(std::string name, expect_name());
  while (skip_op(".")) {
    LES_ASSIGN_OR_RETURN(std::string part, expect_name());
    name += "." + part;
  }
  ExprPtr t = node(ExprKind::test, line);
  t->name = std::move(name);
  t->args.push_back(std::move(n));
  const Token& c = cur();
  const bool arg_start =
      c.type == Tok::name || c.type == Tok::string || c.type == Tok::integer || c.type == Tok::floating ||
      (c.type == Tok::op && (c.text == "[" || c.text == "{"));
  if (is_op("(")) {
    LES_RETURN_IF_ERROR(parse_call_args(*t));
  } else if (arg_start && !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) return fail("You cannot chain multiple tests with is");
    LES_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary());
    LES_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
    t->args.push_back(std::move(arg));
  }
  if (!negated) return t;
  ExprPtr n2 = node(ExprKind::not_, line);
  n2->args.push_back(std::move(t));
  return n2;
}

}  // namespace les::jinja::detail
