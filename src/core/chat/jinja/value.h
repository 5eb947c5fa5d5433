// Values of LES's Jinja engine: the Python objects a Jinja2 template sees when
// Hugging Face's apply_chat_template renders it (str, int, float, bool, None,
// list, tuple, dict, Jinja's Undefined, and a few objects: namespace, loop,
// macros, functions and bound methods).
//
// Semantics follow CPython 3.11 and Jinja2 3.1 in an ImmutableSandboxedEnvironment
// (the environment transformers uses): lists and dicts are never modified
// after they are built (the sandbox of Jinja2 >= 3.1.3 forbids list.append,
// list.pop, dict.update, ...), so a Value shares them by pointer and copying
// a Value is cheap. The one mutable object is a namespace
// (`{% set ns.x = ... %}`).
//
// Strings are UTF-8; operations that Python defines on code points (len,
// indexing, slicing, upper/lower) decode them (pystr.h).
//
// Thread-safety: a Value and everything it points to belong to one render
// (one thread); nothing is shared between renders except the parsed template.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace les::jinja {

class Object;
struct ListData;
struct DictData;

// The Python type a Value holds.
enum class Kind : uint8_t { undefined, none, boolean, integer, floating, string, list, dict, object };

// What a list-like Value is in Python: they iterate alike but differ in
// printing, len(), indexing, truthiness and the `sequence` test.
enum class SeqKind : uint8_t {
  list,
  tuple,
  generator,    // what map/select/unique/items/... return: single-use, always truthy, no len()
  dict_keys,    // dict.keys() / values() / items() views: len() but no indexing
  dict_values,
  dict_items,
  range,        // range(...): indexable; printed as range(start, stop[, step])
};

class Value {
 public:
  Value() = default;  // Jinja's Undefined (no name)
  Value(bool b) : kind_(Kind::boolean), flag_(b) {}                       // NOLINT: implicit by design
  Value(int64_t i) : kind_(Kind::integer) { num_.i = i; }                 // NOLINT
  Value(int i) : kind_(Kind::integer) { num_.i = i; }                     // NOLINT
  Value(double f) : kind_(Kind::floating) { num_.f = f; }                 // NOLINT
  Value(std::string s);                                                   // NOLINT
  Value(std::string_view s) : Value(std::string(s)) {}                   // NOLINT
  Value(const char* s) : Value(std::string(s)) {}                        // NOLINT

  // Undefined that names what was missing: `hint` is the message of the
  // UndefinedError raised when the value is used ("'x' is undefined").
  static Value undefined(std::string hint);
  // The sandbox's undefined for a forbidden attribute (list.append, ...):
  // using it raises SecurityError with `message`.
  static Value unsafe(std::string message);
  static Value none();
  // A markupsafe.Markup string (what the safe filter returns): adding a plain
  // string to it HTML-escapes that string, as in Python.
  static Value markup(std::string s);
  static Value list(std::vector<Value> items, SeqKind seq = SeqKind::list);
  static Value dict(DictData d);
  static Value object(std::shared_ptr<Object> o);

  Kind kind() const noexcept { return kind_; }
  bool is_undefined() const noexcept { return kind_ == Kind::undefined; }
  bool is_none() const noexcept { return kind_ == Kind::none; }
  bool is_bool() const noexcept { return kind_ == Kind::boolean; }
  bool is_int() const noexcept { return kind_ == Kind::integer; }
  bool is_float() const noexcept { return kind_ == Kind::floating; }
  // int, float or bool (Python's numbers.Number, which includes bool).
  bool is_number() const noexcept {
    return kind_ == Kind::boolean || kind_ == Kind::integer || kind_ == Kind::floating;
  }
  // int or bool (an integer in Python arithmetic).
  bool is_integral() const noexcept { return kind_ == Kind::boolean || kind_ == Kind::integer; }
  bool is_string() const noexcept { return kind_ == Kind::string; }
  bool is_list() const noexcept { return kind_ == Kind::list; }
  bool is_dict() const noexcept { return kind_ == Kind::dict; }
  bool is_object() const noexcept { return kind_ == Kind::object; }
  bool is_unsafe() const noexcept { return kind_ == Kind::undefined && flag_; }
  bool is_markup() const noexcept { return kind_ == Kind::string && flag_; }

  // Python's bool(): False for Undefined, None, 0, 0.0, "", empty containers.
  bool truthy() const;

  // Payloads; each requires the matching kind.
  bool as_bool() const noexcept { return flag_; }
  int64_t as_int() const noexcept { return kind_ == Kind::boolean ? (flag_ ? 1 : 0) : num_.i; }  // int or bool
  double as_double() const noexcept;  // any number
  const std::string& str() const noexcept { return *str_; }
  const ListData& list() const noexcept { return *list_; }
  SeqKind seq() const noexcept;
  const DictData& dict() const noexcept { return *dict_; }
  Object& object() const noexcept { return *obj_; }
  const std::shared_ptr<Object>& object_ptr() const noexcept { return obj_; }
  const std::shared_ptr<const ListData>& list_ptr() const noexcept { return list_; }
  // How deeply containers nest in this value: 0 for a scalar, 1 + the
  // deepest item for a list, dict or object (a namespace keeps its own count).
  uint32_t depth() const noexcept;
  // The message an Undefined raises when used; empty for an anonymous one.
  std::string undefined_hint() const { return str_ ? *str_ : std::string(); }

 private:
  Kind kind_ = Kind::undefined;
  bool flag_ = false;  // the bool's value; an Undefined is the sandbox's; a string is Markup
  union {
    int64_t i;
    double f;
  } num_{0};
  std::shared_ptr<const std::string> str_;  // the string, or an Undefined's hint
  std::shared_ptr<const ListData> list_;
  std::shared_ptr<const DictData> dict_;
  std::shared_ptr<Object> obj_;
};

// A list-like value's items. A generator's items are consumed once: `pos` is
// how many were taken (Python's iterator state), so a second loop over the
// same generator sees nothing, as in Python.
struct ListData {
  std::vector<Value> items;
  SeqKind seq = SeqKind::list;
  uint32_t depth = 1;                                       // Value::depth(), set by Value::list
  int64_t range_start = 0, range_stop = 0, range_step = 1;  // SeqKind::range: its arguments, for printing
  mutable size_t pos = 0;                                   // SeqKind::generator: items already taken
};

// A dict: insertion-ordered (key, value) pairs with unique keys.
struct DictData {
  std::vector<std::pair<Value, Value>> items;
  uint32_t depth = 1;  // Value::depth(), set by Value::dict

  // The value under `key`, or nullptr. Keys compare with Python's == (1 == 1.0 == True).
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  // Inserts or replaces (keeping the first insertion's position, as Python does).
  void set(Value key, Value value);
};

// Values nested deeper than this are refused where a template builds them
// (literals, dict(), namespace(), namespace attributes), so printing,
// comparing and freeing them never recurse without bound.
inline constexpr uint32_t kMaxValueDepth = 512;

// Python's == between any two values (numbers across int/float/bool, lists
// item by item, dicts as mappings; Undefined equals Undefined; objects by identity).
bool equals(const Value& a, const Value& b);

// Whether `v` may be a dict key in Python (hashable): None, bool, int, float, str, tuple of hashables.
bool hashable(const Value& v);

// The Python type name of a value, as error messages print it ("str", "int",
// "NoneType", "list", "dict", "Undefined", ...).
std::string type_name(const Value& v);

}  // namespace les::jinja
