// The objects of the Jinja runtime: namespaces, loop contexts, macros,
// built-in functions (the globals) and bound methods.
//
// Thread-safety: per render (value.h).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/chat/jinja/ast.h"
#include "core/chat/jinja/eval.h"
#include "core/chat/jinja/object.h"

namespace les::jinja {

// namespace(...): the one mutable object; `{% set ns.x = v %}` assigns.
class Namespace final : public Object {
 public:
  std::string type_name() const override { return "Namespace"; }
  Result<std::string> repr() const override;
  Value getattr(std::string_view name) const override;
  uint32_t depth() const override { return depth_; }
  // Sets an attribute; the namespace's depth only grows (it may hold itself).
  void set(std::string_view name, Value v) {
    depth_ = std::max(depth_, v.depth() + 1);
    attrs_.set(Value(name), std::move(v));
  }
  // Replaces all attributes (namespace(...)).
  void assign(DictData d) {
    depth_ = std::max<uint32_t>(1, d.depth);
    attrs_ = std::move(d);
  }
  DictData& attrs() { return attrs_; }

 private:
  DictData attrs_;
  uint32_t depth_ = 1;
};

// `loop` inside a for body.
class LoopObject final : public Object {
 public:
  LoopObject(std::shared_ptr<const std::vector<Value>> items, int depth0, const Stmt* stmt)
      : items_(std::move(items)), depth0_(depth0), stmt_(stmt) {
    for (const Value& v : *items_) nesting_ = std::max(nesting_, v.depth() + 1);
  }
  uint32_t depth() const override { return nesting_; }
  std::string type_name() const override { return "LoopContext"; }
  Result<std::string> repr() const override;
  Value getattr(std::string_view name) const override;
  bool callable() const override { return stmt_->recursive; }
  Result<Value> call(Evaluator& ev, CallArgs& args) override;  // loop(items) of a recursive loop

  void set_index(size_t i) { index0_ = i; }
  // loop.cycle(...) and loop.changed(...).
  Result<Value> cycle(const CallArgs& args) const;
  Value changed(const CallArgs& args);

 private:
  std::shared_ptr<const std::vector<Value>> items_;
  size_t index0_ = 0;
  int depth0_;
  const Stmt* stmt_;
  uint32_t nesting_ = 1;
  bool have_last_ = false;
  Value last_changed_;
};

// A macro (or a call block's `caller`): a body rendered in a new scope whose
// parent is the scope the macro was defined in. That scope is held weakly (a
// scope holds its macros, so a strong pointer would be a cycle); calling a
// macro whose scope has ended is refused.
class Macro final : public Object {
 public:
  Macro(const Stmt& def, const std::shared_ptr<Scope>& closure, std::string name, size_t first_default)
      : def_(def), closure_(closure), name_(std::move(name)), first_default_(first_default) {}
  std::string type_name() const override { return "Macro"; }
  Result<std::string> repr() const override { return "<Macro '" + name_ + "'>"; }
  Value getattr(std::string_view name) const override;
  bool callable() const override { return true; }
  Result<Value> call(Evaluator& ev, CallArgs& args) override;

 private:
  const Stmt& def_;
  std::weak_ptr<Scope> closure_;
  std::string name_;
  size_t first_default_;  // def_.exprs index of params[0]'s default (0 for macros, 1 for call blocks)
};

using BuiltinFn = Result<Value> (*)(Evaluator& ev, CallArgs& args);

// A global function (range, namespace, dict, raise_exception, strftime_now).
class BuiltinFunction final : public Object {
 public:
  BuiltinFunction(std::string name, BuiltinFn fn) : name_(std::move(name)), fn_(fn) {}
  std::string type_name() const override { return "builtin_function_or_method"; }
  bool callable() const override { return true; }
  Result<Value> call(Evaluator& ev, CallArgs& args) override { return fn_(ev, args); }

 private:
  std::string name_;
  BuiltinFn fn_;
};

// obj.method, called later: str, list and dict methods (methods.h), loop.cycle / loop.changed.
class BoundMethod final : public Object {
 public:
  BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  uint32_t depth() const override { return self_.depth() + 1; }
  std::string type_name() const override { return "builtin_function_or_method"; }
  bool callable() const override { return true; }
  Result<Value> call(Evaluator& ev, CallArgs& args) override;

 private:
  Value self_;
  std::string name_;
};

// The global named `name` (a BuiltinFunction), or Undefined. Globals that
// LES does not implement (cycler, joiner, lipsum) raise unsupported when called.
Value global_function(std::string_view name);

}  // namespace les::jinja
