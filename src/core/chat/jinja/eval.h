// The Jinja evaluator: renders a parsed template (ast.h) against variables.
//
// Scoping follows Jinja2: `if` shares its scope; each iteration of a `for`
// body, a macro call, a `with`, a block `set`, a filter block and a
// generation block get a new scope whose parent is where they appear (a macro
// keeps the scope it was defined in and sees its later changes, as a Python
// closure does); `set` writes to the current scope. Names not found in any
// scope are looked up among the globals (range, namespace, dict,
// raise_exception, strftime_now, ...), then they are Undefined.
//
// Every render is bounded (RenderLimits): the output and any string or list
// built, the number of steps (statements, loop iterations, calls) and the
// depth of nested calls, so a hostile template ends with an error instead of
// exhausting memory, time or the stack.
//
// Thread-safety: an Evaluator is one render on one thread.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/chat/jinja/ast.h"
#include "core/chat/jinja/object.h"
#include "core/chat/jinja/value.h"
#include "util/status.h"

namespace les::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{16} << 20;  // the rendered text, and any one string or list built
  uint64_t max_steps = 20'000'000;             // statements + loop iterations + calls
  int max_call_depth = 100;                    // nested macro calls, recursive loops
  int max_nesting = 500;  // statements and expressions evaluated at once (fits a 512 KiB stack in Release)
};

struct RenderOptions {
  RenderLimits limits;
  // strftime_now()'s clock (local time); absent = the current local time.
  std::optional<std::tm> now;
};

// Variables by name, with a parent to fall back to.
class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}
  // The variable in this scope or an ancestor, or nullptr.
  const Value* find(std::string_view name) const;
  // Sets a variable in this scope.
  void set(std::string_view name, Value value);

 private:
  std::shared_ptr<Scope> parent_;
  std::vector<std::pair<std::string, Value>> vars_;
};

class Namespace;

class Evaluator {
 public:
  Evaluator(const RenderOptions& options, std::shared_ptr<Scope> globals);
  // Empties the namespaces of the render, which may hold themselves (a cycle).
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Records a namespace for the destructor.
  void track(const std::shared_ptr<Namespace>& ns);

  // Renders `body` (a whole template) into *out.
  Status render(const Body& body, std::string* out);

  // Statements (exec.cpp) and expressions (eval_expr.cpp).
  Status exec(const Body& body);
  Result<Value> eval(const Expr& e);

  // Python / Jinja2 operations the filters and methods share.
  Result<Value> getattr(const Value& obj, std::string_view name);
  Result<Value> getitem(const Value& obj, const Value& key);
  Result<Value> call(const Value& callee, CallArgs& args);
  Result<Value> filter(std::string_view name, const Value& input, const CallArgs& args, bool soft = true);
  Result<bool> test(std::string_view name, const Value& input, const CallArgs& args, bool soft = true);

  // Renders `body` in `scope` into a string (macro calls, block set, filter blocks).
  Result<std::string> capture(const Body& body, std::shared_ptr<Scope> scope);
  // Runs a for statement over `iterable` at loop depth `depth0` (also a recursive loop's call).
  Status run_for(const Stmt& s, const Value& iterable, int depth0);

  // Limits: counts one step; checks a size about to be built; enters / leaves a call.
  Status step();
  Status check_size(size_t bytes) const;
  Status check_depth(const Value& v) const;
  Status enter_call();
  void leave_call() { --call_depth_; }

  // RAII: sends the output to *target for its lifetime.
  class Capture {
   public:
    Capture(Evaluator& ev, std::string* target) : ev_(ev), saved_(ev.out_) { ev.out_ = target; }
    ~Capture() { ev_.out_ = saved_; }
    Capture(const Capture&) = delete;
    Capture& operator=(const Capture&) = delete;

   private:
    Evaluator& ev_;
    std::string* saved_;
  };

  const RenderOptions& options() const { return opt_; }
  const std::shared_ptr<Scope>& scope() const { return scope_; }
  std::shared_ptr<Scope>& scope_slot() { return scope_; }  // for ScopeSwap
  int line() const { return line_; }

 private:
  enum class Flow : uint8_t { normal, break_, continue_ };

  Status exec_one(const Stmt& s);
  Status exec_stmt(const Stmt& s);
  Result<Value> eval_expr(const Expr& e);
  Status exec_if(const Stmt& s);
  Status exec_set(const Stmt& s);
  Status exec_call_block(const Stmt& s);
  Status assign(const Expr& target, const Value& value, Scope& scope);
  Status emit(std::string_view text);
  Result<Value> eval_call(const Expr& e, const Value* caller);  // caller: a call block's `caller`
  Result<Value> eval_filter_chain(const Expr& chain, const Value& input);
  Result<CallArgs> eval_args(const Expr& e, size_t first);
  Result<Value> lookup(const std::string& name);

  const RenderOptions& opt_;
  std::shared_ptr<Scope> scope_;
  std::vector<std::weak_ptr<Namespace>> namespaces_;
  std::string* out_ = nullptr;
  Flow flow_ = Flow::normal;
  uint64_t steps_ = 0;
  int call_depth_ = 0;
  int nesting_ = 0;
  int line_ = 0;
};

// RAII: restores the evaluator's current scope (used by exec / calls).
class ScopeSwap {
 public:
  ScopeSwap(std::shared_ptr<Scope>& slot, std::shared_ptr<Scope> next) : slot_(slot), saved_(std::move(slot)) {
    slot_ = std::move(next);
  }
  ~ScopeSwap() { slot_ = std::move(saved_); }
  ScopeSwap(const ScopeSwap&) = delete;
  ScopeSwap& operator=(const ScopeSwap&) = delete;

 private:
  std::shared_ptr<Scope>& slot_;
  std::shared_ptr<Scope> saved_;
};

}  // namespace les::jinja
