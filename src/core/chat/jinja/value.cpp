// Values: construction, truthiness, equality (value.h); the Object defaults
// and ArgBinder (object.h).
#include "core/chat/jinja/value.h"

#include <algorithm>
#include <cmath>

#include "core/chat/jinja/error.h"
#include "core/chat/jinja/object.h"

namespace les::jinja {

Value::Value(std::string s) : kind_(Kind::string), str_(std::make_shared<const std::string>(std::move(s))) {}

Value Value::undefined(std::string hint) {
  Value v;
  if (!hint.empty()) v.str_ = std::make_shared<const std::string>(std::move(hint));
  return v;
}

Value Value::unsafe(std::string message) {
  Value v = undefined(std::move(message));
  v.flag_ = true;
  return v;
}

Value Value::markup(std::string s) {
  Value v(std::move(s));
  v.flag_ = true;
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::none;
  return v;
}

Value Value::list(std::vector<Value> items, SeqKind seq) {
  auto data = std::make_shared<ListData>();
  for (const Value& item : items) data->depth = std::max(data->depth, item.depth() + 1);
  data->items = std::move(items);
  data->seq = seq;
  Value v;
  v.kind_ = Kind::list;
  v.list_ = std::move(data);
  return v;
}

Value Value::dict(DictData d) {
  d.depth = 1;
  for (const auto& [k, x] : d.items) d.depth = std::max({d.depth, k.depth() + 1, x.depth() + 1});
  Value v;
  v.kind_ = Kind::dict;
  v.dict_ = std::make_shared<const DictData>(std::move(d));
  return v;
}

Value Value::object(std::shared_ptr<Object> o) {
  Value v;
  v.kind_ = Kind::object;
  v.obj_ = std::move(o);
  return v;
}

double Value::as_double() const noexcept {
  switch (kind_) {
    case Kind::floating: return num_.f;
    case Kind::integer: return static_cast<double>(num_.i);
    case Kind::boolean: return flag_ ? 1.0 : 0.0;
    default: return 0.0;
  }
}

SeqKind Value::seq() const noexcept { return list_->seq; }

uint32_t Value::depth() const noexcept {
  switch (kind_) {
    case Kind::list: return list_->depth;
    case Kind::dict: return dict_->depth;
    case Kind::object: return obj_->depth();
    default: return 0;
  }
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::undefined:
    case Kind::none: return false;
    case Kind::boolean: return flag_;
    case Kind::integer: return num_.i != 0;
    case Kind::floating: return num_.f != 0.0;
    case Kind::string: return !str_->empty();
    case Kind::list:
      if (list_->seq == SeqKind::generator) return true;  // a Python generator object is always true
      return !list_->items.empty();
    case Kind::dict: return !dict_->items.empty();
    case Kind::object: return true;
  }
  return false;
}

namespace {

bool numbers_equal(const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral()) return a.as_int() == b.as_int();
  const double x = a.as_double(), y = b.as_double();
  if (x != y) return false;
  // Exact for integers beyond 2^53: compare the integer with the float's integral value.
  if (a.is_integral() && std::fabs(y) < 9.2e18) return a.as_int() == static_cast<int64_t>(y);
  if (b.is_integral() && std::fabs(x) < 9.2e18) return b.as_int() == static_cast<int64_t>(x);
  return true;
}

bool lists_equal(const ListData& a, const ListData& b) {
  if (a.items.size() != b.items.size()) return false;
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!equals(a.items[i], b.items[i])) return false;
  return true;
}

bool dicts_equal(const DictData& a, const DictData& b) {
  if (a.items.size() != b.items.size()) return false;
  for (const auto& [k, v] : a.items) {
    const Value* other = b.find(k);
    if (other == nullptr || !equals(v, *other)) return false;
  }
  return true;
}

}  // namespace

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return numbers_equal(a, b);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::undefined:
    case Kind::none: return true;
    case Kind::string: return a.str() == b.str();
    case Kind::list: {
      const SeqKind sa = a.seq(), sb = b.seq();
      if (sa == SeqKind::generator || sb == SeqKind::generator) return a.list_ptr() == b.list_ptr();
      const bool seq_a = sa == SeqKind::list || sa == SeqKind::tuple || sa == SeqKind::range;
      if (sa != sb && seq_a) return false;  // [1] != (1,)
      return lists_equal(a.list(), b.list());
    }
    case Kind::dict: return &a.dict() == &b.dict() || dicts_equal(a.dict(), b.dict());
    case Kind::object: return a.object_ptr() == b.object_ptr();
    default: return false;
  }
}

bool hashable(const Value& v) {
  switch (v.kind()) {
    case Kind::none:
    case Kind::boolean:
    case Kind::integer:
    case Kind::floating:
    case Kind::string:
    case Kind::undefined: return true;
    case Kind::list:
      if (v.seq() != SeqKind::tuple) return false;
      for (const Value& item : v.list().items)
        if (!hashable(item)) return false;
      return true;
    default: return false;
  }
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::undefined: return "Undefined";
    case Kind::none: return "NoneType";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::floating: return "float";
    case Kind::string: return "str";
    case Kind::list:
      switch (v.seq()) {
        case SeqKind::list: return "list";
        case SeqKind::tuple: return "tuple";
        case SeqKind::generator: return "generator";
        case SeqKind::dict_keys: return "dict_keys";
        case SeqKind::dict_values: return "dict_values";
        case SeqKind::dict_items: return "dict_items";
        case SeqKind::range: return "range";
      }
      return "list";
    case Kind::dict: return "dict";
    case Kind::object: return v.object().type_name();
  }
  return "object";
}

const Value* DictData::find(const Value& key) const {
  for (const auto& [k, v] : items)
    if (equals(k, key)) return &v;
  return nullptr;
}

const Value* DictData::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k.is_string() && k.str() == key) return &v;
  return nullptr;
}

void DictData::set(Value key, Value value) {
  for (auto& [k, v] : items)
    if (equals(k, key)) {
      v = std::move(value);
      return;
    }
  items.emplace_back(std::move(key), std::move(value));
}

Result<std::string> Object::repr() const { return unsupported_construct("printing a " + type_name() + " object"); }

Value Object::getattr(std::string_view name) const {
  return Value::undefined(cat("'", type_name(), " object' has no attribute '", name, "'"));
}

Result<Value> Object::call(Evaluator&, CallArgs&) { return type_error(cat("'", type_name(), "' object is not callable")); }

ArgBinder::ArgBinder(std::string_view function, const CallArgs& args, std::initializer_list<std::string_view> params)
    : bound_(params.size(), nullptr) {
  const std::string fn(function);
  if (args.pos.size() > params.size()) {
    status_ = type_error(fn + "() takes at most " + std::to_string(params.size()) + " arguments (" +
                         std::to_string(args.pos.size()) + " given)");
    return;
  }
  for (size_t i = 0; i < args.pos.size(); ++i) bound_[i] = &args.pos[i];
  for (const auto& [name, value] : args.kw) {
    size_t i = 0;
    for (std::string_view p : params) {
      if (p == name) break;
      ++i;
    }
    if (i == params.size()) {
      status_ = type_error(fn + "() got an unexpected keyword argument '" + name + "'");
      return;
    }
    if (bound_[i] != nullptr) {
      status_ = type_error(fn + "() got multiple values for argument '" + name + "'");
      return;
    }
    bound_[i] = &value;
  }
}

Value ArgBinder::get_or(size_t i, Value fallback) const {
  const Value* v = get(i);
  return v != nullptr ? *v : std::move(fallback);
}

}  // namespace les::jinja
