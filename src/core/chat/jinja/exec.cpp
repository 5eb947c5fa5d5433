// The Jinja evaluator, statements (eval.h).
#include "core/chat/jinja/callables.h"
#include "core/chat/jinja/error.h"
#include "core/chat/jinja/eval.h"
#include "core/chat/jinja/format.h"
#include "core/chat/jinja/ops.h"

namespace les::jinja {

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent_.get())
    for (const auto& [k, v] : s->vars_)
      if (k == name) return &v;
  return nullptr;
}

void Scope::set(std::string_view name, Value value) {
  for (auto& [k, v] : vars_)
    if (k == name) {
      v = std::move(value);
      return;
    }
  vars_.emplace_back(std::string(name), std::move(value));
}

Evaluator::Evaluator(const RenderOptions& options, std::shared_ptr<Scope> globals)
    : opt_(options), scope_(std::move(globals)) {}

Evaluator::~Evaluator() {
  for (const auto& weak : namespaces_)
    if (auto ns = weak.lock()) ns->attrs().items.clear();
}

void Evaluator::track(const std::shared_ptr<Namespace>& ns) {
  if (namespaces_.size() >= 64 && namespaces_.size() == namespaces_.capacity()) {  // drop the ended ones first
    std::erase_if(namespaces_, [](const std::weak_ptr<Namespace>& w) { return w.expired(); });
  }
  namespaces_.push_back(ns);
}

Status Evaluator::render(const Body& body, std::string* out) {
  out_ = out;
  Status st = exec(body);
  if (!st.ok() && st.code() != StatusCode::internal)
    return Status(st.code(), st.message() + " (template line " + std::to_string(line_) + ")");
  return st;
}

Status Evaluator::step() {
  if (++steps_ > opt_.limits.max_steps)
    return limit_error("more than " + std::to_string(opt_.limits.max_steps) + " steps");
  return Status();
}

Status Evaluator::check_size(size_t bytes) const {
  if (bytes > opt_.limits.max_output_bytes)
    return limit_error("text or list beyond " + std::to_string(opt_.limits.max_output_bytes) + " bytes");
  return Status();
}

Status Evaluator::check_depth(const Value& v) const {
  if (v.depth() > kMaxValueDepth)
    return limit_error("values nested deeper than " + std::to_string(kMaxValueDepth) + " levels");
  return Status();
}

Status Evaluator::enter_call() {
  if (call_depth_ >= opt_.limits.max_call_depth)
    return limit_error("calls nested deeper than " + std::to_string(opt_.limits.max_call_depth));
  ++call_depth_;
  return Status();
}

Status Evaluator::emit(std::string_view text) {
  LES_RETURN_IF_ERROR(check_size(out_->size() + text.size()));
  out_->append(text);
  return Status();
}

Result<std::string> Evaluator::capture(const Body& body, std::shared_ptr<Scope> scope) {
  std::string out;
  Capture cap(*this, &out);
  ScopeSwap swap(scope_, std::move(scope));
  LES_RETURN_IF_ERROR(exec(body));
  return out;
}

Status Evaluator::exec(const Body& body) {
  for (const StmtPtr& s : body) {
    LES_RETURN_IF_ERROR(exec_one(*s));
    if (flow_ != Flow::normal) break;
  }
  return Status();
}

Status Evaluator::assign(const Expr& target, const Value& value, Scope& scope) {
  if (target.kind == ExprKind::name) {
    scope.set(target.name, value);
    return Status();
  }
  if (target.kind == ExprKind::getattr) {  // {% set ns.attr = value %}
    LES_ASSIGN_OR_RETURN(Value ns, lookup(target.args[0]->name));
    auto* n = ns.is_object() ? dynamic_cast<Namespace*>(&ns.object()) : nullptr;
    if (n == nullptr) return runtime_error("cannot assign attribute on non-namespace object");
    n->set(target.name, value);
    return check_depth(ns);
  }
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(value));
  const size_t want = target.args.size();
  if (items.size() < want)
    return value_error("not enough values to unpack (expected " + std::to_string(want) + ", got " +
                       std::to_string(items.size()) + ")");
  if (items.size() > want) return value_error("too many values to unpack (expected " + std::to_string(want) + ")");
  for (size_t i = 0; i < want; ++i) LES_RETURN_IF_ERROR(assign(*target.args[i], items[i], scope));
  return Status();
}

Status Evaluator::run_for(const Stmt& s, const Value& iterable, int depth0) {
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(iterable));
  if (s.exprs[2]) {  // `for x in xs if cond`: filtered first, so loop.* counts the kept items
    std::vector<Value> kept;
    for (Value& item : items) {
      LES_RETURN_IF_ERROR(step());
      auto probe = std::make_shared<Scope>(scope_);
      LES_RETURN_IF_ERROR(assign(*s.exprs[0], item, *probe));
      ScopeSwap swap(scope_, probe);
      LES_ASSIGN_OR_RETURN(Value keep, eval(*s.exprs[2]));
      if (keep.truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    ScopeSwap swap(scope_, std::make_shared<Scope>(scope_));
    return exec(s.bodies[1]);
  }
  auto list = std::make_shared<const std::vector<Value>>(std::move(items));
  auto loop = std::make_shared<LoopObject>(list, depth0, &s);
  const Value loop_value = Value::object(loop);
  for (size_t i = 0; i < list->size(); ++i) {
    LES_RETURN_IF_ERROR(step());
    auto iteration = std::make_shared<Scope>(scope_);
    LES_RETURN_IF_ERROR(assign(*s.exprs[0], (*list)[i], *iteration));
    iteration->set("loop", loop_value);
    loop->set_index(i);
    ScopeSwap swap(scope_, std::move(iteration));
    LES_RETURN_IF_ERROR(exec(s.bodies[0]));
    const Flow f = flow_;
    flow_ = Flow::normal;
    if (f == Flow::break_) break;
  }
  return Status();
}

Status Evaluator::exec_if(const Stmt& s) {
  for (size_t i = 0; i < s.exprs.size(); ++i) {
    LES_ASSIGN_OR_RETURN(Value t, eval(*s.exprs[i]));
    if (t.truthy()) return exec(s.bodies[i]);
  }
  if (s.has_else) return exec(s.bodies.back());
  return Status();
}

Status Evaluator::exec_set(const Stmt& s) {
  if (s.kind == StmtKind::set) {
    LES_ASSIGN_OR_RETURN(Value v, eval(*s.exprs[1]));
    return assign(*s.exprs[0], v, *scope_);
  }
  LES_ASSIGN_OR_RETURN(std::string text, capture(s.bodies[0], std::make_shared<Scope>(scope_)));
  Value v(std::move(text));
  if (s.exprs[1]) {
    LES_ASSIGN_OR_RETURN(v, eval_filter_chain(*s.exprs[1], v));
  }
  return assign(*s.exprs[0], v, *scope_);
}

Status Evaluator::exec_call_block(const Stmt& s) {
  const Value caller = Value::object(std::make_shared<Macro>(s, scope_, "caller", 1));
  LES_ASSIGN_OR_RETURN(Value result, eval_call(*s.exprs[0], &caller));
  LES_ASSIGN_OR_RETURN(std::string text, to_str(result));
  return emit(text);
}

namespace {

// Counts one level of the evaluator's recursion for its scope.
struct Nesting {
  explicit Nesting(int& count) : n(count) { ++n; }
  ~Nesting() { --n; }
  Nesting(const Nesting&) = delete;
  Nesting& operator=(const Nesting&) = delete;
  int& n;
};

}  // namespace

Status Evaluator::exec_one(const Stmt& s) {
  Nesting nest(nesting_);
  if (nesting_ > opt_.limits.max_nesting)
    return limit_error("statements and expressions nested deeper than " + std::to_string(opt_.limits.max_nesting));
  return exec_stmt(s);
}

Result<Value> Evaluator::eval(const Expr& e) {
  Nesting nest(nesting_);
  if (nesting_ > opt_.limits.max_nesting)
    return limit_error("statements and expressions nested deeper than " + std::to_string(opt_.limits.max_nesting));
  return eval_expr(e);
}

Status Evaluator::exec_stmt(const Stmt& s) {
  LES_RETURN_IF_ERROR(step());
  line_ = s.line;
  switch (s.kind) {
    case StmtKind::text: return emit(s.text);
    case StmtKind::print: {
      LES_ASSIGN_OR_RETURN(Value v, eval(*s.exprs[0]));
      LES_ASSIGN_OR_RETURN(std::string text, to_str(v));
      return emit(text);
    }
    case StmtKind::if_: return exec_if(s);
    case StmtKind::for_: {
      LES_ASSIGN_OR_RETURN(Value iterable, eval(*s.exprs[1]));
      return run_for(s, iterable, 0);
    }
    case StmtKind::set:
    case StmtKind::set_block: return exec_set(s);
    case StmtKind::macro:
      scope_->set(s.name, Value::object(std::make_shared<Macro>(s, scope_, s.name, 0)));
      return Status();
    case StmtKind::call_block: return exec_call_block(s);
    case StmtKind::filter_block: {
      LES_ASSIGN_OR_RETURN(std::string text, capture(s.bodies[0], std::make_shared<Scope>(scope_)));
      LES_ASSIGN_OR_RETURN(Value v, eval_filter_chain(*s.exprs[0], Value(std::move(text))));
      LES_ASSIGN_OR_RETURN(std::string out, to_str(v));
      return emit(out);
    }
    case StmtKind::with: {
      auto inner = std::make_shared<Scope>(scope_);
      for (size_t i = 0; i + 1 < s.exprs.size(); i += 2) {
        LES_ASSIGN_OR_RETURN(Value v, eval(*s.exprs[i + 1]));  // values see the outer scope only
        LES_RETURN_IF_ERROR(assign(*s.exprs[i], v, *inner));
      }
      ScopeSwap swap(scope_, std::move(inner));
      return exec(s.bodies[0]);
    }
    case StmtKind::scope: {
      ScopeSwap swap(scope_, std::make_shared<Scope>(scope_));
      return exec(s.bodies[0]);
    }
    case StmtKind::break_: flow_ = Flow::break_; return Status();
    case StmtKind::continue_: flow_ = Flow::continue_; return Status();
  }
  return internal_error("unknown statement kind");
}

}  // namespace les::jinja
