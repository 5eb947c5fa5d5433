// Namespaces, loop contexts, macros, globals and bound methods (callables.h).
#include "core/chat/jinja/callables.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "core/chat/jinja/error.h"
#include "core/chat/jinja/format.h"
#include "core/chat/jinja/methods.h"
#include "core/chat/jinja/ops.h"

namespace les::jinja {

Result<std::string> Namespace::repr() const {
  LES_ASSIGN_OR_RETURN(std::string d, to_repr(Value::dict(attrs_)));
  return "<Namespace " + d + ">";
}

Value Namespace::getattr(std::string_view name) const {
  if (const Value* v = attrs_.find(name)) return *v;
  return Object::getattr(name);
}

Result<std::string> LoopObject::repr() const {
  return "<LoopContext " + std::to_string(index0_ + 1) + "/" + std::to_string(items_->size()) + ">";
}

Value LoopObject::getattr(std::string_view name) const {
  const auto n = static_cast<int64_t>(items_->size());
  const auto i = static_cast<int64_t>(index0_);
  if (name == "index") return Value(i + 1);
  if (name == "index0") return Value(i);
  if (name == "revindex") return Value(n - i);
  if (name == "revindex0") return Value(n - i - 1);
  if (name == "first") return Value(i == 0);
  if (name == "last") return Value(i == n - 1);
  if (name == "length") return Value(n);
  if (name == "depth") return Value(int64_t{depth0_} + 1);
  if (name == "depth0") return Value(int64_t{depth0_});
  if (name == "previtem") return i > 0 ? (*items_)[index0_ - 1] : Value::undefined("there is no previous item");
  if (name == "nextitem") return i + 1 < n ? (*items_)[index0_ + 1] : Value::undefined("there is no next item");
  if (name == "cycle" || name == "changed") {
    auto self = std::const_pointer_cast<Object>(shared_from_this());
    return Value::object(std::make_shared<BoundMethod>(Value::object(std::move(self)), std::string(name)));
  }
  return Object::getattr(name);
}

Result<Value> LoopObject::cycle(const CallArgs& args) const {
  if (!args.kw.empty()) return type_error("cycle() got an unexpected keyword argument");
  if (args.pos.empty()) return type_error("no items for cycling given");
  return args.pos[index0_ % args.pos.size()];
}

Value LoopObject::changed(const CallArgs& args) {
  Value now = Value::list(args.pos, SeqKind::tuple);
  if (have_last_ && equals(now, last_changed_)) return Value(false);
  have_last_ = true;
  last_changed_ = std::move(now);
  return Value(true);
}

Result<Value> LoopObject::call(Evaluator& ev, CallArgs& args) {
  if (args.pos.size() != 1 || !args.kw.empty()) return type_error("loop() takes exactly one argument");
  LES_RETURN_IF_ERROR(ev.enter_call());
  auto scope = std::make_shared<Scope>(ev.scope());
  Result<std::string> text = [&]() -> Result<std::string> {
    std::string out;
    Evaluator::Capture cap(ev, &out);
    LES_RETURN_IF_ERROR(ev.run_for(*stmt_, args.pos[0], depth0_ + 1));
    return out;
  }();
  ev.leave_call();
  if (!text.ok()) return text.status();
  return Value(std::move(*text));
}

Value Macro::getattr(std::string_view name) const {
  if (name == "name") return Value(name_);
  if (name == "arguments") {
    std::vector<Value> params(def_.params.begin(), def_.params.end());
    return Value::list(std::move(params), SeqKind::tuple);
  }
  if (name == "catch_kwargs") return Value(def_.uses_kwargs);
  if (name == "catch_varargs") return Value(def_.uses_varargs);
  if (name == "caller") return Value(def_.uses_caller);
  return Object::getattr(name);
}

Result<Value> Macro::call(Evaluator& ev, CallArgs& args) {
  // Jinja2's Macro.__call__: positional arguments first, then the remaining
  // parameters by keyword; `caller`, `kwargs` and `varargs` only when the body reads them.
  const auto& params = def_.params;
  const size_t n = params.size();
  std::shared_ptr<Scope> closure = closure_.lock();
  if (!closure) return unsupported_construct("calling macro '" + name_ + "' after the scope it was defined in ended");
  auto scope = std::make_shared<Scope>(std::move(closure));
  std::vector<bool> bound(n, false);
  const size_t npos = std::min(args.pos.size(), n);
  for (size_t i = 0; i < npos; ++i) {
    scope->set(params[i], args.pos[i]);
    bound[i] = true;
  }
  std::vector<std::pair<std::string, Value>> kw = args.kw;
  bool found_caller = false;
  if (npos != n) {
    for (size_t i = npos; i < n; ++i) {
      if (params[i] == "caller") found_caller = true;
      for (auto it = kw.begin(); it != kw.end(); ++it)
        if (it->first == params[i]) {
          scope->set(params[i], std::move(it->second));
          bound[i] = true;
          kw.erase(it);
          break;
        }
    }
  } else {
    found_caller = std::find(params.begin(), params.end(), "caller") != params.end();
  }
  if (def_.uses_caller && !found_caller) {
    Value caller = Value::undefined("No caller defined");
    for (auto it = kw.begin(); it != kw.end(); ++it)
      if (it->first == "caller") {
        caller = std::move(it->second);
        kw.erase(it);
        break;
      }
    scope->set("caller", std::move(caller));
  }
  if (def_.uses_kwargs) {
    DictData d;
    for (auto& [k, v] : kw) d.set(Value(k), std::move(v));
    scope->set("kwargs", Value::dict(std::move(d)));
  } else if (!kw.empty()) {
    if (kw.front().first == "caller")
      return type_error("macro '" + name_ + "' was invoked with two values for the special caller argument");
    return type_error("macro '" + name_ + "' takes no keyword argument '" + kw.front().first + "'");
  }
  if (def_.uses_varargs) {
    std::vector<Value> extra(args.pos.begin() + static_cast<std::ptrdiff_t>(npos), args.pos.end());
    scope->set("varargs", Value::list(std::move(extra), SeqKind::tuple));
  } else if (args.pos.size() > n) {
    return type_error("macro '" + name_ + "' takes not more than " + std::to_string(n) + " argument(s)");
  }
  LES_RETURN_IF_ERROR(ev.enter_call());
  Result<std::string> text = [&]() -> Result<std::string> {
    ScopeSwap swap(ev.scope_slot(), scope);
    for (size_t i = 0; i < n; ++i) {
      if (bound[i]) continue;
      const Expr* dflt = def_.exprs[first_default_ + i].get();
      if (dflt == nullptr) {
        scope->set(params[i], Value::undefined("parameter '" + params[i] + "' was not provided"));
        continue;
      }
      LES_ASSIGN_OR_RETURN(Value v, ev.eval(*dflt));
      scope->set(params[i], std::move(v));
    }
    return ev.capture(def_.bodies[0], scope);
  }();
  ev.leave_call();
  if (!text.ok()) return text.status();
  return Value(std::move(*text));
}

Result<Value> BoundMethod::call(Evaluator& ev, CallArgs& args) {
  if (self_.is_object()) {
    if (auto* loop = dynamic_cast<LoopObject*>(&self_.object())) {
      if (name_ == "cycle") return loop->cycle(args);
      return loop->changed(args);
    }
  }
  return call_method(ev, self_, name_, args);
}

namespace {

Result<int64_t> int_arg(const Value& v, const char* fn) {
  if (v.is_integral()) return v.as_int();
  if (v.is_undefined()) return undefined_use(v);
  return type_error(cat("'", type_name(v), "' object cannot be interpreted as an integer (", fn, ")"));
}

Result<Value> fn_range(Evaluator& ev, CallArgs& args) {
  if (!args.kw.empty()) return type_error("range() takes no keyword arguments");
  if (args.pos.empty() || args.pos.size() > 3)
    return type_error("range expected at most 3 arguments, got " + std::to_string(args.pos.size()));
  int64_t start = 0, stop = 0, step = 1;
  if (args.pos.size() == 1) {
    LES_ASSIGN_OR_RETURN(stop, int_arg(args.pos[0], "range"));
  } else {
    LES_ASSIGN_OR_RETURN(start, int_arg(args.pos[0], "range"));
    LES_ASSIGN_OR_RETURN(stop, int_arg(args.pos[1], "range"));
    if (args.pos.size() == 3) {
      LES_ASSIGN_OR_RETURN(step, int_arg(args.pos[2], "range"));
    }
  }
  if (step == 0) return value_error("range() arg 3 must not be zero");
  // Jinja2's sandbox refuses ranges of more than MAX_RANGE = 100000 items (OverflowError).
  const long double count = step > 0 ? (static_cast<long double>(stop) - start + step - 1) / step
                                     : (static_cast<long double>(start) - stop - step - 1) / -step;
  if (count > 100000)
    return invalid_argument_error(
        "OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  std::vector<Value> items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.emplace_back(i);
  LES_RETURN_IF_ERROR(ev.check_size(items.size()));
  Value v = Value::list(std::move(items), SeqKind::range);
  auto& data = const_cast<ListData&>(v.list());
  data.range_start = start;
  data.range_stop = stop;
  data.range_step = step;
  return v;
}

// dict(*args, **kwargs) as Python builds it.
Result<DictData> build_dict(const CallArgs& args, const char* fn) {
  DictData d;
  if (args.pos.size() > 1) return type_error(std::string(fn) + " expected at most 1 argument");
  if (args.pos.size() == 1) {
    const Value& src = args.pos[0];
    if (src.is_dict()) {
      d = src.dict();
    } else {
      LES_ASSIGN_OR_RETURN(std::vector<Value> pairs, iterate(src));
      for (const Value& p : pairs) {
        LES_ASSIGN_OR_RETURN(std::vector<Value> kv, iterate(p));
        if (kv.size() != 2) return value_error("dictionary update sequence element has the wrong length");
        if (!hashable(kv[0])) return type_error("unhashable type: '" + type_name(kv[0]) + "'");
        d.set(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [k, v] : args.kw) d.set(Value(k), v);
  return d;
}

Result<Value> fn_dict(Evaluator&, CallArgs& args) {
  LES_ASSIGN_OR_RETURN(DictData d, build_dict(args, "dict"));
  return Value::dict(std::move(d));
}

Result<Value> fn_namespace(Evaluator& ev, CallArgs& args) {
  LES_ASSIGN_OR_RETURN(DictData d, build_dict(args, "namespace"));
  auto ns = std::make_shared<Namespace>();
  ns->assign(Value::dict(std::move(d)).dict());
  ev.track(ns);
  return Value::object(std::move(ns));
}

Result<Value> fn_raise_exception(Evaluator&, CallArgs& args) {
  ArgBinder b("raise_exception", args, {"message"});
  LES_RETURN_IF_ERROR(b.status());
  if (b.get(0) == nullptr) return type_error("raise_exception() missing 1 required positional argument: 'message'");
  LES_ASSIGN_OR_RETURN(std::string msg, to_str(*b.get(0)));
  return template_error(msg);
}

Result<Value> fn_strftime_now(Evaluator& ev, CallArgs& args) {
  ArgBinder b("strftime_now", args, {"format"});
  LES_RETURN_IF_ERROR(b.status());
  if (b.get(0) == nullptr || !b.get(0)->is_string())
    return type_error("strftime() argument 1 must be str");
  std::tm tm{};
  long micros = 0;
  if (ev.options().now) {
    tm = *ev.options().now;
  } else {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    localtime_r(&t, &tm);
    micros = static_cast<long>(
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000);
  }
  // datetime.strftime expands %f itself (microseconds); a naive datetime has empty %z / %Z.
  std::string fmt;
  const std::string& f = b.get(0)->str();
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '%' && i + 1 < f.size()) {
      const char c = f[i + 1];
      ++i;
      if (c == 'f') {
        char buf[8];
        std::snprintf(buf, sizeof buf, "%06ld", micros);
        fmt += buf;
      } else if (c == 'z' || c == 'Z') {
      } else {
        fmt += '%';
        fmt += c == '%' ? std::string("%") : std::string(1, c);
      }
      continue;
    }
    fmt += f[i];
  }
  if (fmt.empty()) return Value(std::string());
  std::string out(256 + fmt.size() * 8, '\0');
  const size_t n = std::strftime(out.data(), out.size(), fmt.c_str(), &tm);
  if (n == 0) return value_error("strftime() produced no text for format " + f);
  out.resize(n);
  return Value(std::move(out));
}

Result<Value> fn_unsupported(Evaluator&, CallArgs&) {
  return unsupported_construct("the globals cycler(), joiner() and lipsum()");
}

}  // namespace

Value global_function(std::string_view name) {
  BuiltinFn fn = nullptr;
  if (name == "range") fn = fn_range;
  else if (name == "dict") fn = fn_dict;
  else if (name == "namespace") fn = fn_namespace;
  else if (name == "raise_exception") fn = fn_raise_exception;
  else if (name == "strftime_now") fn = fn_strftime_now;
  else if (name == "cycler" || name == "joiner" || name == "lipsum") fn = fn_unsupported;
  if (fn == nullptr) return Value::undefined(cat("'", name, "' is undefined"));
  return Value::object(std::make_shared<BuiltinFunction>(std::string(name), fn));
}

}  // namespace les::jinja
