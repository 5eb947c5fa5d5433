// Python methods templates call on values: str (strip, split, startswith,
// replace, upper, ...), dict (get, items, keys, values, copy) and list /
// tuple (index, count, copy). Methods that modify a list or dict exist but
// are forbidden, as in Jinja2's ImmutableSandboxedEnvironment (calling them
// raises SecurityError); Python methods LES does not implement are refused
// (unsupported, naming the method).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "core/chat/jinja/object.h"
#include "core/chat/jinja/value.h"

namespace les::jinja {

enum class MethodKind {
  none,      // not a method of obj's type (getattr falls back to items / Undefined)
  safe,      // callable through obj.name(...)
  mutating,  // exists, but the sandbox forbids it
};

MethodKind method_kind(const Value& obj, std::string_view name);

// obj.name(args) for a MethodKind::safe method.
Result<Value> call_method(Evaluator& ev, const Value& obj, std::string_view name, const CallArgs& args);

}  // namespace les::jinja
