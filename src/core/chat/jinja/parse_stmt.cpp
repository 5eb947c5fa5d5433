// The Jinja parser, statements and the compile-time name check (parser.h).
#include <algorithm>
#include <array>

#include "core/chat/jinja/parser_impl.h"

namespace les::jinja {

bool is_jinja_filter(std::string_view name) {
  static constexpr std::array<std::string_view, 54> kFilters = {
      "abs",     "attr",      "batch",     "capitalize", "center",     "count",     "d",        "default",
      "dictsort", "e",        "escape",    "filesizeformat", "first",  "float",     "forceescape", "format",
      "groupby", "indent",    "int",       "items",      "join",       "last",      "length",   "list",
      "lower",   "map",       "max",       "min",        "pprint",     "random",    "reject",   "rejectattr",
      "replace", "reverse",   "round",     "safe",       "select",     "selectattr", "slice",   "sort",
      "string",  "striptags", "sum",       "title",      "tojson",     "trim",      "truncate", "unique",
      "upper",   "urlencode", "urlize",    "wordcount",  "wordwrap",   "xmlattr"};
  return std::find(kFilters.begin(), kFilters.end(), name) != kFilters.end();
}

bool is_jinja_test(std::string_view name) {
  static constexpr std::array<std::string_view, 39> kTests = {
      "!=",      "<",        "<=",      "==",       ">",           ">=",     "boolean", "callable",
      "defined", "divisibleby", "eq",   "equalto",  "escaped",     "even",   "false",   "filter",
      "float",   "ge",       "greaterthan", "gt",   "in",          "integer", "iterable", "le",
      "lessthan", "lower",   "lt",      "mapping",  "ne",          "none",   "number",  "odd",
      "sameas",  "sequence", "string",  "test",     "true",        "undefined", "upper"};
  return std::find(kTests.begin(), kTests.end(), name) != kTests.end();
}

namespace detail {
namespace {

StmtPtr stmt(StmtKind kind, int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = kind;
  s->line = line;
  return s;
}

bool assignable(const Expr& e) {
  if (e.kind == ExprKind::name) return true;
  if (e.kind != ExprKind::tuple) return false;
  return std::all_of(e.args.begin(), e.args.end(), [](const ExprPtr& a) { return assignable(*a); });
}

// Whether any expression in the subtree is the name `n` (Jinja2's find_undeclared, near enough:
// the macro body reads varargs / kwargs / caller).
bool reads_name(const Expr* e, std::string_view n);
bool reads_name(const Body& body, std::string_view n) {
  for (const StmtPtr& s : body) {
    for (const ExprPtr& e : s->exprs)
      if (reads_name(e.get(), n)) return true;
    for (const Body& b : s->bodies)
      if (reads_name(b, n)) return true;
  }
  return false;
}
bool reads_name(const Expr* e, std::string_view n) {
  if (e == nullptr) return false;
  if (e->kind == ExprKind::name && e->name == n) return true;
  for (const ExprPtr& a : e->args)
    if (reads_name(a.get(), n)) return true;
  for (const auto& kw : e->kwargs)
    if (reads_name(kw.second.get(), n)) return true;
  return reads_name(e->star_args.get(), n) || reads_name(e->star_kwargs.get(), n);
}

}  // namespace

Result<Body> Parser::parse_template() {
  Body body;
  LES_RETURN_IF_ERROR(subparse(body, {}));
  if (cur().type != Tok::eof) return fail("unexpected '" + describe() + "'");
  return body;
}

// Parses until a block tag whose name is in end_tags (left as the current
// token, after its `{%`) or the end of the template.
Status Parser::subparse(Body& out, std::initializer_list<std::string_view> end_tags) {
  while (cur().type != Tok::eof) {
    const Token& t = cur();
    if (t.type == Tok::data) {
      StmtPtr s = stmt(StmtKind::text, t.line);
      s->text = t.text;
      out.push_back(std::move(s));
      next();
    } else if (t.type == Tok::var_begin) {
      StmtPtr s = stmt(StmtKind::print, t.line);
      next();
      LES_ASSIGN_OR_RETURN(ExprPtr e, parse_tuple(true));
      s->exprs.push_back(std::move(e));
      LES_RETURN_IF_ERROR(expect(Tok::var_end, "end of print statement"));
      out.push_back(std::move(s));
    } else if (t.type == Tok::block_begin) {
      next();
      for (std::string_view end : end_tags)
        if (is_name(end)) return Status();
      LES_ASSIGN_OR_RETURN(StmtPtr s, parse_statement());
      LES_RETURN_IF_ERROR(expect(Tok::block_end, "end of statement block"));
      out.push_back(std::move(s));
    } else {
      return fail("unexpected '" + describe() + "'");
    }
  }
  return Status();
}

namespace {

// The parse_* helpers below share these with Parser through its public API.
Status parse_statements(Parser& p, Body& out, std::initializer_list<std::string_view> end_tags, bool drop_needle) {
  p.skip_op(":");
  LES_RETURN_IF_ERROR(p.expect(Tok::block_end, "end of statement block"));
  LES_RETURN_IF_ERROR(p.subparse(out, end_tags));
  if (p.cur().type == Tok::eof) {
    std::string tags;
    for (std::string_view t : end_tags) tags += (tags.empty() ? "'" : " or '") + std::string(t) + "'";
    return p.fail("Unexpected end of template. Jinja was looking for the following tags: " + tags + ".");
  }
  if (drop_needle) p.next();
  return Status();
}

Result<ExprPtr> parse_assign_target(Parser& p, bool name_only, std::initializer_list<std::string_view> extra_end,
                                    bool with_namespace) {
  const int line = p.cur().line;
  ExprPtr target;
  if (with_namespace && p.cur().type == Tok::name && p.look().type == Tok::op && p.look().text == ".") {
    ExprPtr ns = p.node(ExprKind::name, line);
    ns->name = p.cur().text;
    p.next();
    p.next();
    LES_ASSIGN_OR_RETURN(std::string attr, p.expect_name());
    target = p.node(ExprKind::getattr, line);
    target->name = std::move(attr);
    target->args.push_back(std::move(ns));
    return target;
  }
  if (name_only) {
    LES_ASSIGN_OR_RETURN(std::string n, p.expect_name());
    target = p.node(ExprKind::name, line);
    target->name = std::move(n);
  } else {
    LES_ASSIGN_OR_RETURN(target, p.parse_tuple(true, extra_end, false, true));
  }
  if (!assignable(*target)) return syntax_error("can't assign to this expression", line);
  return target;
}

Status parse_signature(Parser& p, Stmt& s) {
  LES_RETURN_IF_ERROR(p.expect_op("("));
  bool seen_default = false;
  while (!p.is_op(")")) {
    if (!s.params.empty()) LES_RETURN_IF_ERROR(p.expect_op(","));
    LES_ASSIGN_OR_RETURN(std::string n, p.expect_name());
    s.params.push_back(std::move(n));
    if (p.skip_op("=")) {
      LES_ASSIGN_OR_RETURN(ExprPtr d, p.parse_expression());
      s.exprs.push_back(std::move(d));
      seen_default = true;
    } else {
      if (seen_default) return p.fail("non-default argument follows default argument");
      s.exprs.push_back(nullptr);
    }
  }
  return p.expect_op(")");
}

void note_reads(Stmt& s) {
  s.uses_varargs = reads_name(s.bodies[0], "varargs");
  s.uses_kwargs = reads_name(s.bodies[0], "kwargs");
  s.uses_caller = reads_name(s.bodies[0], "caller");
}

}  // namespace

Result<StmtPtr> Parser::parse_statement() {
  DepthGuard guard(*this);
  LES_RETURN_IF_ERROR(guard.status);
  if (cur().type != Tok::name) return fail("tag name expected");
  const std::string tag = cur().text;
  const int line = cur().line;
  StmtPtr s = stmt(StmtKind::text, line);
  if (tag == "if") {
    s->kind = StmtKind::if_;
    next();
    while (true) {
      LES_ASSIGN_OR_RETURN(ExprPtr test, parse_tuple(false));
      s->exprs.push_back(std::move(test));
      s->bodies.emplace_back();
      LES_RETURN_IF_ERROR(parse_statements(*this, s->bodies.back(), {"elif", "else", "endif"}, false));
      const std::string which = cur().text;
      next();
      if (which == "elif") continue;
      if (which == "else") {
        s->has_else = true;
        s->bodies.emplace_back();
        LES_RETURN_IF_ERROR(parse_statements(*this, s->bodies.back(), {"endif"}, true));
      }
      return s;
    }
  }
  if (tag == "for") {
    s->kind = StmtKind::for_;
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr target, parse_assign_target(*this, false, {"in"}, false));
    s->exprs.push_back(std::move(target));
    if (!skip_name("in")) return fail("expected 'in', got '" + describe() + "'");
    LES_ASSIGN_OR_RETURN(ExprPtr iter, parse_tuple(false, {"recursive"}));
    s->exprs.push_back(std::move(iter));
    ExprPtr filter;
    if (skip_name("if")) {
      LES_ASSIGN_OR_RETURN(filter, parse_expression());
    }
    s->exprs.push_back(std::move(filter));
    s->recursive = skip_name("recursive");
    s->bodies.resize(2);
    ++loop_depth_;
    Status st = parse_statements(*this, s->bodies[0], {"endfor", "else"}, false);
    --loop_depth_;
    LES_RETURN_IF_ERROR(st);
    const bool has_else = is_name("else");
    next();
    if (has_else) LES_RETURN_IF_ERROR(parse_statements(*this, s->bodies[1], {"endfor"}, true));
    return s;
  }
  if (tag == "set") {
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr target, parse_assign_target(*this, false, {}, true));
    s->exprs.push_back(std::move(target));
    if (skip_op("=")) {
      s->kind = StmtKind::set;
      LES_ASSIGN_OR_RETURN(ExprPtr value, parse_tuple(true));
      s->exprs.push_back(std::move(value));
      return s;
    }
    s->kind = StmtKind::set_block;
    LES_ASSIGN_OR_RETURN(ExprPtr chain, parse_filter(nullptr, false));
    s->exprs.push_back(std::move(chain));
    s->bodies.emplace_back();
    LES_RETURN_IF_ERROR(parse_statements(*this, s->bodies[0], {"endset"}, true));
    return s;
  }
  if (tag == "macro" || tag == "call") {
    s->kind = tag == "macro" ? StmtKind::macro : StmtKind::call_block;
    next();
    if (tag == "macro") {
      LES_ASSIGN_OR_RETURN(s->name, expect_name());
      LES_RETURN_IF_ERROR(parse_signature(*this, *s));
    } else {
      if (is_op("(")) LES_RETURN_IF_ERROR(parse_signature(*this, *s));
      LES_ASSIGN_OR_RETURN(ExprPtr call, parse_expression());
      if (call->kind != ExprKind::call) return fail("expected call");
      s->exprs.insert(s->exprs.begin(), std::move(call));
    }
    s->bodies.emplace_back();
    const int saved_loops = loop_depth_;
    loop_depth_ = 0;
    Status st = parse_statements(*this, s->bodies[0], {tag == "macro" ? "endmacro" : "endcall"}, true);
    loop_depth_ = saved_loops;
    LES_RETURN_IF_ERROR(st);
    note_reads(*s);
    return s;
  }
  if (tag == "filter") {
    s->kind = StmtKind::filter_block;
    next();
    LES_ASSIGN_OR_RETURN(ExprPtr chain, parse_filter(nullptr, true));
    s->exprs.push_back(std::move(chain));
    s->bodies.emplace_back();
    LES_RETURN_IF_ERROR(parse_statements(*this, s->bodies[0], {"endfilter"}, true));
    return s;
  }
  if (tag == "with") {
    s->kind = StmtKind::with;
    next();
    while (cur().type != Tok::block_end) {
      if (!s->exprs.empty()) LES_RETURN_IF_ERROR(expect_op(","));
      LES_ASSIGN_OR_RETURN(ExprPtr target, parse_assign_target(*this, false, {}, false));
      LES_RETURN_IF_ERROR(expect_op("="));
      LES_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      s->exprs.push_back(std::move(target));
      s->exprs.push_back(std::move(value));
    }
    s->bodies.emplace_back();
    LES_RETURN_IF_ERROR(parse_statements(*this, s->bodies[0], {"endwith"}, true));
    return s;
  }
  if (tag == "generation") {
    s->kind = StmtKind::scope;
    next();
    s->bodies.emplace_back();
    LES_RETURN_IF_ERROR(parse_statements(*this, s->bodies[0], {"endgeneration"}, true));
    return s;
  }
  if (tag == "print") {
    s->kind = StmtKind::print;
    next();
    ExprPtr t = node(ExprKind::tuple, line);
    while (cur().type != Tok::block_end) {
      if (!t->args.empty()) LES_RETURN_IF_ERROR(expect_op(","));
      LES_ASSIGN_OR_RETURN(ExprPtr e, parse_expression());
      t->args.push_back(std::move(e));
    }
    // {% print a, b %} prints each expression in turn: a concat of str() of each.
    ExprPtr c = node(ExprKind::concat, line);
    c->args = std::move(t->args);
    if (c->args.empty()) {
      ExprPtr empty = node(ExprKind::literal, line);
      empty->value = Value(std::string());
      c->args.push_back(std::move(empty));
    }
    s->exprs.push_back(std::move(c));
    return s;
  }
  if (tag == "break" || tag == "continue") {
    if (loop_depth_ == 0) return fail("'" + tag + "' outside a loop");
    s->kind = tag == "break" ? StmtKind::break_ : StmtKind::continue_;
    next();
    return s;
  }
  if (tag == "block" || tag == "extends" || tag == "include" || tag == "import" || tag == "from" ||
      tag == "autoescape")
    return unsupported_construct("{% " + tag + " %} (line " + std::to_string(line) + ")");
  return fail("Encountered unknown tag '" + tag + "'.");
}

namespace {

Status check_expr(Expr* e, bool soft) {
  if (e == nullptr) return Status();
  if (e->kind == ExprKind::cond) soft = true;
  if (e->kind == ExprKind::filter || e->kind == ExprKind::test) {
    e->soft = soft;
    const bool known = e->kind == ExprKind::filter ? is_jinja_filter(e->name) : is_jinja_test(e->name);
    if (!known && !soft)
      return assertion_error(std::string("No ") + (e->kind == ExprKind::filter ? "filter" : "test") + " named '" +
                                 e->name + "'.",
                             e->line);
  }
  for (ExprPtr& a : e->args) LES_RETURN_IF_ERROR(check_expr(a.get(), soft));
  for (auto& kw : e->kwargs) LES_RETURN_IF_ERROR(check_expr(kw.second.get(), soft));
  LES_RETURN_IF_ERROR(check_expr(e->star_args.get(), soft));
  return check_expr(e->star_kwargs.get(), soft);
}

Status check_body(Body& body, bool soft) {
  for (StmtPtr& s : body) {
    switch (s->kind) {
      case StmtKind::if_:
        for (ExprPtr& e : s->exprs) LES_RETURN_IF_ERROR(check_expr(e.get(), true));
        for (Body& b : s->bodies) LES_RETURN_IF_ERROR(check_body(b, true));
        break;
      case StmtKind::for_:  // the iterable in this frame; filter, body and else in inner frames
        LES_RETURN_IF_ERROR(check_expr(s->exprs[1].get(), soft));
        LES_RETURN_IF_ERROR(check_expr(s->exprs[2].get(), false));
        for (Body& b : s->bodies) LES_RETURN_IF_ERROR(check_body(b, false));
        break;
      case StmtKind::call_block:  // the call in this frame; defaults and body in the macro's frame
        LES_RETURN_IF_ERROR(check_expr(s->exprs[0].get(), soft));
        for (size_t i = 1; i < s->exprs.size(); ++i) LES_RETURN_IF_ERROR(check_expr(s->exprs[i].get(), false));
        LES_RETURN_IF_ERROR(check_body(s->bodies[0], false));
        break;
      case StmtKind::with:  // values in this frame, body inner
        for (size_t i = 1; i < s->exprs.size(); i += 2) LES_RETURN_IF_ERROR(check_expr(s->exprs[i].get(), soft));
        LES_RETURN_IF_ERROR(check_body(s->bodies[0], false));
        break;
      case StmtKind::macro:
      case StmtKind::set_block:
      case StmtKind::filter_block:
      case StmtKind::scope:  // inner frames throughout
        for (ExprPtr& e : s->exprs) LES_RETURN_IF_ERROR(check_expr(e.get(), false));
        for (Body& b : s->bodies) LES_RETURN_IF_ERROR(check_body(b, false));
        break;
      default:
        for (ExprPtr& e : s->exprs) LES_RETURN_IF_ERROR(check_expr(e.get(), soft));
        break;
    }
  }
  return Status();
}

}  // namespace

Status check_names(Body& body) { return check_body(body, false); }

}  // namespace detail

Result<Body> parse(const std::vector<Token>& tokens) {
  if (tokens.empty() || tokens.back().type != Tok::eof) return internal_error("jinja::parse: tokens lack an eof");
  detail::Parser p(tokens);
  LES_ASSIGN_OR_RETURN(Body body, p.parse_template());
  LES_RETURN_IF_ERROR(detail::check_names(body));
  return body;
}

}  // namespace les::jinja
