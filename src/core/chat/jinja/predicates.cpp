// Jinja2's tests (`x is defined`, `x is string`, ...; "predicates" here, so the
// name does not suggest a unit test) and the evaluator's test dispatch
// (filters.h). Source: jinja2/tests.py 3.1.
#include <algorithm>

#include "core/chat/jinja/error.h"
#include "core/chat/jinja/filters.h"
#include "core/chat/jinja/format.h"
#include "core/chat/jinja/ops.h"
#include "core/chat/jinja/parser.h"
#include "core/chat/jinja/pystr.h"

namespace les::jinja {
namespace {

Status no_args(const CallArgs& args, const char* name) {
  if (!args.pos.empty() || !args.kw.empty()) return type_error(std::string(name) + "() takes 1 positional argument");
  return Status();
}

Result<const Value*> one_arg(const CallArgs& args, const char* name) {
  ArgBinder b(name, args, {"other"});
  LES_RETURN_IF_ERROR(b.status());
  if (b.get(0) == nullptr) return type_error(std::string(name) + "() missing 1 required positional argument");
  return b.get(0);
}

#define LES_JINJA_KIND_TEST(fn, expr)                                   \
  Result<bool> fn(Evaluator&, const Value& v, const CallArgs& args) { \
    LES_RETURN_IF_ERROR(no_args(args, #fn));                          \
    return (expr);                                                    \
  }

LES_JINJA_KIND_TEST(t_defined, !v.is_undefined())
LES_JINJA_KIND_TEST(t_undefined, v.is_undefined())
LES_JINJA_KIND_TEST(t_none, v.is_none())
LES_JINJA_KIND_TEST(t_boolean, v.is_bool())
LES_JINJA_KIND_TEST(t_false, v.is_bool() && !v.as_bool())
LES_JINJA_KIND_TEST(t_true, v.is_bool() && v.as_bool())
LES_JINJA_KIND_TEST(t_integer, v.is_int())
LES_JINJA_KIND_TEST(t_float, v.is_float())
LES_JINJA_KIND_TEST(t_number, v.is_number())
LES_JINJA_KIND_TEST(t_string, v.is_string())
LES_JINJA_KIND_TEST(t_mapping, v.is_dict())
// len(v) and v.__getitem__ both exist: strings, lists, tuples, ranges, dicts, and Undefined.
LES_JINJA_KIND_TEST(t_sequence, v.is_string() || v.is_dict() || v.is_undefined() ||
                                     (v.is_list() && (v.seq() == SeqKind::list || v.seq() == SeqKind::tuple ||
                                                      v.seq() == SeqKind::range)))
// iter(v) works: strings, lists and the like, dicts, Undefined, loop contexts.
LES_JINJA_KIND_TEST(t_iterable, v.is_string() || v.is_list() || v.is_dict() || v.is_undefined() ||
                                     (v.is_object() && v.object().type_name() == "LoopContext"))
// callable(v): macros, functions, methods, loop contexts, and Undefined (it defines __call__).
LES_JINJA_KIND_TEST(t_callable, v.is_undefined() || (v.is_object() && (v.object().callable() ||
                                                                        v.object().type_name() == "LoopContext")))

Result<bool> t_lower(Evaluator&, const Value& v, const CallArgs& args) {
  LES_RETURN_IF_ERROR(no_args(args, "lower"));
  LES_ASSIGN_OR_RETURN(std::string s, to_str(v));
  return py::islower(s);
}

Result<bool> t_upper(Evaluator&, const Value& v, const CallArgs& args) {
  LES_RETURN_IF_ERROR(no_args(args, "upper"));
  LES_ASSIGN_OR_RETURN(std::string s, to_str(v));
  return py::isupper(s);
}

Result<bool> mod_equals(const Value& v, const Value& divisor, int64_t want, size_t max_len) {
  LES_ASSIGN_OR_RETURN(Value m, binary_op(BinOp::mod, v, divisor, max_len));
  return equals(m, Value(want));
}

Result<bool> t_odd(Evaluator& ev, const Value& v, const CallArgs& args) {
  LES_RETURN_IF_ERROR(no_args(args, "odd"));
  return mod_equals(v, Value(int64_t{2}), 1, ev.options().limits.max_output_bytes);
}

Result<bool> t_even(Evaluator& ev, const Value& v, const CallArgs& args) {
  LES_RETURN_IF_ERROR(no_args(args, "even"));
  return mod_equals(v, Value(int64_t{2}), 0, ev.options().limits.max_output_bytes);
}

Result<bool> t_divisibleby(Evaluator& ev, const Value& v, const CallArgs& args) {
  LES_ASSIGN_OR_RETURN(const Value* n, one_arg(args, "divisibleby"));
  return mod_equals(v, *n, 0, ev.options().limits.max_output_bytes);
}

template <CmpOp op>
Result<bool> t_compare(Evaluator&, const Value& v, const CallArgs& args) {
  LES_ASSIGN_OR_RETURN(const Value* other, one_arg(args, "compare"));
  return compare(op, v, *other);
}

Result<bool> t_sameas(Evaluator&, const Value& v, const CallArgs& args) {
  LES_ASSIGN_OR_RETURN(const Value* o, one_arg(args, "sameas"));
  if (v.kind() != o->kind()) return false;
  switch (v.kind()) {
    case Kind::none:
    case Kind::undefined: return v.is_none();  // None is a singleton; two Undefined objects are not the same
    case Kind::boolean: return v.as_bool() == o->as_bool();
    case Kind::integer:  // CPython caches -5..256
      return v.as_int() == o->as_int() && v.as_int() >= -5 && v.as_int() <= 256;
    case Kind::list: return v.list_ptr() == o->list_ptr();
    case Kind::dict: return &v.dict() == &o->dict();
    case Kind::object: return v.object_ptr() == o->object_ptr();
    default: return unsupported_construct("the 'sameas' test on " + type_name(v) + " values");
  }
}

Result<bool> t_filter(Evaluator&, const Value& v, const CallArgs& args) {
  LES_RETURN_IF_ERROR(no_args(args, "filter"));
  return v.is_string() && is_jinja_filter(v.str());
}

Result<bool> t_test(Evaluator&, const Value& v, const CallArgs& args) {
  LES_RETURN_IF_ERROR(no_args(args, "test"));
  return v.is_string() && is_jinja_test(v.str());
}

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

constexpr TestEntry kTests[] = {
    {"defined", t_defined},
    {"undefined", t_undefined},
    {"none", t_none},
    {"boolean", t_boolean},
    {"false", t_false},
    {"true", t_true},
    {"integer", t_integer},
    {"float", t_float},
    {"number", t_number},
    {"string", t_string},
    {"mapping", t_mapping},
    {"sequence", t_sequence},
    {"iterable", t_iterable},
    {"callable", t_callable},
    {"lower", t_lower},
    {"upper", t_upper},
    {"odd", t_odd},
    {"even", t_even},
    {"divisibleby", t_divisibleby},
    {"sameas", t_sameas},
    {"filter", t_filter},
    {"test", t_test},
    {"in", t_compare<CmpOp::in>},
    {"==", t_compare<CmpOp::eq>},
    {"eq", t_compare<CmpOp::eq>},
    {"equalto", t_compare<CmpOp::eq>},
    {"!=", t_compare<CmpOp::ne>},
    {"ne", t_compare<CmpOp::ne>},
    {"<", t_compare<CmpOp::lt>},
    {"lt", t_compare<CmpOp::lt>},
    {"lessthan", t_compare<CmpOp::lt>},
    {"<=", t_compare<CmpOp::le>},
    {"le", t_compare<CmpOp::le>},
    {">", t_compare<CmpOp::gt>},
    {"gt", t_compare<CmpOp::gt>},
    {"greaterthan", t_compare<CmpOp::gt>},
    {">=", t_compare<CmpOp::ge>},
    {"ge", t_compare<CmpOp::ge>},
};

}  // namespace

TestFn find_test(std::string_view name) {
  for (const TestEntry& t : kTests)
    if (t.name == name) return t.fn;
  return nullptr;
}

Result<bool> Evaluator::test(std::string_view name, const Value& input, const CallArgs& args, bool) {
  LES_RETURN_IF_ERROR(step());
  if (TestFn fn = find_test(name)) return fn(*this, input, args);
  if (is_jinja_test(name)) return unsupported_construct("test '" + std::string(name) + "'");
  return runtime_error("No test named '" + std::string(name) + "' found.");
}

}  // namespace les::jinja
