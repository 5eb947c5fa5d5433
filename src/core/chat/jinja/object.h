// Objects a template can hold besides plain data: the base class, call
// arguments and their binding to parameters the way Python binds them.
//
// Thread-safety: per render (see value.h).
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/chat/jinja/value.h"
#include "util/status.h"

namespace les::jinja {

class Evaluator;

// The arguments of a call: positional, then keyword (in call order).
struct CallArgs {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
};

// An object: namespace, loop, macro, function, bound method.
class Object : public std::enable_shared_from_this<Object> {
 public:
  virtual ~Object() = default;
  // Python's type name for messages ("Namespace", "LoopContext", "Macro", ...).
  virtual std::string type_name() const = 0;
  // Python's repr(); objects whose repr holds a memory address are unsupported.
  virtual Result<std::string> repr() const;
  // obj.name: the attribute, or an Undefined naming it.
  virtual Value getattr(std::string_view name) const;
  virtual bool callable() const { return false; }
  // Value::depth() of the object (1 + what it holds).
  virtual uint32_t depth() const { return 1; }
  // Calls the object (only when callable()).
  virtual Result<Value> call(Evaluator& ev, CallArgs& args);
};

// Binds CallArgs to a function's parameters as Python does: positional first,
// then keywords by name; too many positional arguments, an unknown keyword or
// one given twice is a TypeError naming the function.
class ArgBinder {
 public:
  ArgBinder(std::string_view function, const CallArgs& args, std::initializer_list<std::string_view> params);

  const Status& status() const { return status_; }
  // The i-th parameter's argument, or nullptr when not given.
  const Value* get(size_t i) const { return i < bound_.size() ? bound_[i] : nullptr; }
  // The i-th parameter's argument, or `fallback`.
  Value get_or(size_t i, Value fallback) const;

 private:
  Status status_;
  std::vector<const Value*> bound_;
};

}  // namespace les::jinja
