// The Jinja evaluator, expressions (eval.h): names, attribute and item access
// as Jinja2's sandbox does them, calls, operators, literals.
#include <algorithm>

#include "core/chat/jinja/callables.h"
#include "core/chat/jinja/error.h"
#include "core/chat/jinja/eval.h"
#include "core/chat/jinja/format.h"
#include "core/chat/jinja/methods.h"
#include "core/chat/jinja/ops.h"
#include "core/chat/jinja/pystr.h"

namespace les::jinja {
namespace {

std::string object_desc(const Value& obj) {
  if (obj.is_none()) return "'None'";
  return cat("'", type_name(obj), " object'");
}

Value no_attribute(const Value& obj, std::string_view name) {
  return Value::undefined(object_desc(obj) + " has no attribute '" + std::string(name) + "'");
}

// obj.name when obj's type has that method: a bound method, or the sandbox's Undefined.
std::optional<Value> method_attr(const Value& obj, std::string_view name) {
  switch (method_kind(obj, name)) {
    case MethodKind::safe:
      return Value::object(std::make_shared<BoundMethod>(obj, std::string(name)));
    case MethodKind::mutating:
      return Value::unsafe("access to attribute '" + std::string(name) + "' of '" + type_name(obj) +
                           "' object is unsafe.");
    case MethodKind::none: break;
  }
  return std::nullopt;
}

bool is_number_attr(std::string_view name) {
  return name == "real" || name == "imag" || name == "numerator" || name == "denominator" || name == "conjugate" ||
         name == "bit_length" || name == "bit_count" || name == "to_bytes" || name == "is_integer" ||
         name == "hex" || name == "as_integer_ratio";
}

Result<Value> slice_value(const Value& obj, const Value* start, const Value* stop, const Value* step) {
  auto index = [](const Value* v, std::optional<int64_t>& out) {
    if (v == nullptr || v->is_none()) return true;
    if (!v->is_integral()) return false;
    out = v->as_int();
    return true;
  };
  std::optional<int64_t> b, e, st;
  if (!index(start, b) || !index(stop, e) || !index(step, st))
    return type_error("slice indices must be integers or None or have an __index__ method");
  const int64_t stride = st.value_or(1);
  if (stride == 0) return value_error("slice step cannot be zero");
  if (obj.is_markup()) return unsupported_construct("slicing a Markup (|safe) string");
  if (obj.is_string()) {
    const std::u32string cps = py::decode(obj.str());
    std::u32string out;
    for (int64_t i : py::slice_indices(static_cast<int64_t>(cps.size()), b, e, stride))
      out.push_back(cps[static_cast<size_t>(i)]);
    return Value(py::encode(out));
  }
  if (obj.is_list() && obj.seq() != SeqKind::generator && obj.seq() != SeqKind::dict_keys &&
      obj.seq() != SeqKind::dict_values && obj.seq() != SeqKind::dict_items) {
    const auto& items = obj.list().items;
    std::vector<Value> out;
    for (int64_t i : py::slice_indices(static_cast<int64_t>(items.size()), b, e, stride))
      out.push_back(items[static_cast<size_t>(i)]);
    if (obj.seq() == SeqKind::range) return unsupported_construct("slicing a range()");
    return Value::list(std::move(out), obj.seq());
  }
  // Jinja2 slices with Python's own obj[a:b] (not the sandbox's forgiving getitem).
  return type_error(cat("'", type_name(obj), "' object is not subscriptable"));
}

}  // namespace

Result<Value> Evaluator::lookup(const std::string& name) {
  if (const Value* v = scope_->find(name)) return *v;
  return global_function(name);
}

Result<Value> Evaluator::getattr(const Value& obj, std::string_view name) {
  switch (obj.kind()) {
    case Kind::undefined: return undefined_use(obj);
    case Kind::object: return obj.object().getattr(name);
    case Kind::string:
    case Kind::list:
    case Kind::dict: {
      if (auto m = method_attr(obj, name)) return *m;
      if (obj.is_dict())
        if (const Value* v = obj.dict().find(name)) return *v;
      return no_attribute(obj, name);
    }
    default:
      if (obj.is_number() && is_number_attr(name)) return unsupported_construct("attributes of numbers");
      return no_attribute(obj, name);
  }
}

Result<Value> Evaluator::getitem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return undefined_use(obj);
  if (obj.is_dict() && hashable(key)) {
    if (const Value* v = obj.dict().find(key)) return *v;
  } else if (obj.is_list() && key.is_integral() &&
             (obj.seq() == SeqKind::list || obj.seq() == SeqKind::tuple || obj.seq() == SeqKind::range)) {
    const auto& items = obj.list().items;
    int64_t i = key.as_int();
    if (i < 0) i += static_cast<int64_t>(items.size());
    if (i >= 0 && i < static_cast<int64_t>(items.size())) return items[static_cast<size_t>(i)];
    return Value::undefined(object_desc(obj) + " has no element " + std::to_string(key.as_int()));
  } else if (obj.is_markup()) {
    return unsupported_construct("indexing a Markup (|safe) string");
  } else if (obj.is_string() && key.is_integral()) {
    const std::u32string cps = py::decode(obj.str());
    int64_t i = key.as_int();
    if (i < 0) i += static_cast<int64_t>(cps.size());
    if (i >= 0 && i < static_cast<int64_t>(cps.size())) return Value(py::encode(cps.substr(static_cast<size_t>(i), 1)));
    return Value::undefined(object_desc(obj) + " has no element " + std::to_string(key.as_int()));
  }
  // obj[key] failed with a TypeError or LookupError: Jinja2 then tries the attribute.
  if (key.is_string()) {
    if (obj.is_object()) return obj.object().getattr(key.str());
    if (auto m = method_attr(obj, key.str())) return *m;
    return no_attribute(obj, key.str());
  }
  LES_ASSIGN_OR_RETURN(std::string k, to_repr(key));
  return Value::undefined(object_desc(obj) + " has no element " + k);
}

Result<Value> Evaluator::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) return undefined_use(callee);
  if (!callee.is_object() || !callee.object().callable())
    return type_error(cat("'", type_name(callee), "' object is not callable"));
  LES_RETURN_IF_ERROR(step());
  LES_ASSIGN_OR_RETURN(Value result, callee.object().call(*this, args));
  LES_RETURN_IF_ERROR(check_depth(result));
  return result;
}

Result<CallArgs> Evaluator::eval_args(const Expr& e, size_t first) {
  CallArgs a;
  for (size_t i = first; i < e.args.size(); ++i) {
    LES_ASSIGN_OR_RETURN(Value v, eval(*e.args[i]));
    a.pos.push_back(std::move(v));
  }
  if (e.star_args) {
    LES_ASSIGN_OR_RETURN(Value v, eval(*e.star_args));
    LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
    a.pos.insert(a.pos.end(), items.begin(), items.end());
  }
  for (const auto& [k, x] : e.kwargs) {
    LES_ASSIGN_OR_RETURN(Value v, eval(*x));
    a.kw.emplace_back(k, std::move(v));
  }
  if (e.star_kwargs) {
    LES_ASSIGN_OR_RETURN(Value v, eval(*e.star_kwargs));
    if (!v.is_dict()) return type_error("argument after ** must be a mapping, not " + type_name(v));
    for (const auto& [k, x] : v.dict().items) {
      if (!k.is_string()) return type_error("keywords must be strings");
      a.kw.emplace_back(k.str(), x);
    }
  }
  return a;
}

Result<Value> Evaluator::eval_call(const Expr& e, const Value* caller) {
  const Expr& callee = *e.args[0];
  Value fn;
  if (callee.kind == ExprKind::getattr) {
    LES_ASSIGN_OR_RETURN(Value obj, eval(*callee.args[0]));
    if (!obj.is_object() && method_kind(obj, callee.name) == MethodKind::safe) {
      LES_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1));
      LES_RETURN_IF_ERROR(step());
      return call_method(*this, obj, callee.name, args);
    }
    LES_ASSIGN_OR_RETURN(fn, getattr(obj, callee.name));
  } else {
    LES_ASSIGN_OR_RETURN(fn, eval(callee));
  }
  LES_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1));
  if (caller != nullptr) args.kw.emplace_back("caller", *caller);
  line_ = e.line;
  return call(fn, args);
}

Result<Value> Evaluator::eval_filter_chain(const Expr& chain, const Value& input) {
  Value base = input;
  if (chain.args[0]) {
    LES_ASSIGN_OR_RETURN(base, eval_filter_chain(*chain.args[0], input));
  }
  LES_ASSIGN_OR_RETURN(CallArgs args, eval_args(chain, 1));
  return filter(chain.name, base, args, chain.soft);
}

Result<Value> Evaluator::eval_expr(const Expr& e) {
  line_ = e.line;
  switch (e.kind) {
    case ExprKind::literal: return e.value;
    case ExprKind::name: return lookup(e.name);
    case ExprKind::getattr: {
      LES_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0]));
      return getattr(obj, e.name);
    }
    case ExprKind::getitem: {
      LES_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0]));
      const Expr& key = *e.args[1];
      if (key.kind != ExprKind::slice) {
        LES_ASSIGN_OR_RETURN(Value k, eval(key));
        return getitem(obj, k);
      }
      Value parts[3];
      for (int i = 0; i < 3; ++i)
        if (key.args[static_cast<size_t>(i)]) {
          LES_ASSIGN_OR_RETURN(parts[i], eval(*key.args[static_cast<size_t>(i)]));
        }
      if (obj.is_undefined()) return undefined_use(obj);
      return slice_value(obj, key.args[0] ? &parts[0] : nullptr, key.args[1] ? &parts[1] : nullptr,
                         key.args[2] ? &parts[2] : nullptr);
    }
    case ExprKind::slice: return internal_error("a slice outside a subscript");
    case ExprKind::call: return eval_call(e, nullptr);
    case ExprKind::filter: {
      LES_ASSIGN_OR_RETURN(Value input, eval(*e.args[0]));
      LES_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1));
      line_ = e.line;
      return filter(e.name, input, args, e.soft);
    }
    case ExprKind::test: {
      LES_ASSIGN_OR_RETURN(Value input, eval(*e.args[0]));
      LES_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1));
      line_ = e.line;
      LES_ASSIGN_OR_RETURN(bool r, test(e.name, input, args, e.soft));
      return Value(r);
    }
    case ExprKind::neg:
    case ExprKind::pos: {
      LES_ASSIGN_OR_RETURN(Value v, eval(*e.args[0]));
      return negate(v, e.kind == ExprKind::neg);
    }
    case ExprKind::not_: {
      LES_ASSIGN_OR_RETURN(Value v, eval(*e.args[0]));
      return Value(!v.truthy());
    }
    case ExprKind::binary: {
      LES_ASSIGN_OR_RETURN(Value a, eval(*e.args[0]));
      LES_ASSIGN_OR_RETURN(Value b, eval(*e.args[1]));
      line_ = e.line;
      return binary_op(e.op, a, b, opt_.limits.max_output_bytes);
    }
    case ExprKind::and_:
    case ExprKind::or_: {
      LES_ASSIGN_OR_RETURN(Value a, eval(*e.args[0]));
      if (a.truthy() == (e.kind == ExprKind::or_)) return a;
      return eval(*e.args[1]);
    }
    case ExprKind::compare: {
      LES_ASSIGN_OR_RETURN(Value left, eval(*e.args[0]));
      for (size_t i = 0; i < e.cmp.size(); ++i) {
        LES_ASSIGN_OR_RETURN(Value right, eval(*e.args[i + 1]));
        line_ = e.line;
        LES_ASSIGN_OR_RETURN(bool ok, compare(e.cmp[i], left, right));
        if (!ok) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case ExprKind::concat: {
      std::string out;
      for (const ExprPtr& part : e.args) {
        LES_ASSIGN_OR_RETURN(Value v, eval(*part));
        LES_ASSIGN_OR_RETURN(std::string s, to_str(v));
        out += s;
        LES_RETURN_IF_ERROR(check_size(out.size()));
      }
      return Value(std::move(out));
    }
    case ExprKind::cond: {
      LES_ASSIGN_OR_RETURN(Value t, eval(*e.args[0]));
      if (t.truthy()) return eval(*e.args[1]);
      if (e.args[2]) return eval(*e.args[2]);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
    case ExprKind::list:
    case ExprKind::tuple: {
      std::vector<Value> items;
      items.reserve(e.args.size());
      for (const ExprPtr& a : e.args) {
        LES_ASSIGN_OR_RETURN(Value v, eval(*a));
        items.push_back(std::move(v));
      }
      Value v = Value::list(std::move(items), e.kind == ExprKind::list ? SeqKind::list : SeqKind::tuple);
      LES_RETURN_IF_ERROR(check_depth(v));
      return v;
    }
    case ExprKind::dict: {
      DictData d;
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        LES_ASSIGN_OR_RETURN(Value k, eval(*e.args[i]));
        LES_ASSIGN_OR_RETURN(Value v, eval(*e.args[i + 1]));
        if (!hashable(k)) return type_error("unhashable type: '" + type_name(k) + "'");
        d.set(std::move(k), std::move(v));
      }
      Value v = Value::dict(std::move(d));
      LES_RETURN_IF_ERROR(check_depth(v));
      return v;
    }
  }
  return internal_error("unknown expression kind");
}

}  // namespace les::jinja
