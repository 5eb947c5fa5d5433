// Jinja2's filters on sequences (filters.h): map, select / reject and their
// attribute forms, join, sort, dictsort, unique, min / max, sum, first / last,
// list, items, reverse.
#include <algorithm>

#include "core/chat/jinja/error.h"
#include "core/chat/jinja/filters.h"
#include "core/chat/jinja/format.h"
#include "core/chat/jinja/ops.h"
#include "core/chat/jinja/pystr.h"

namespace les::jinja {
namespace {

Value generator(std::vector<Value> items) { return Value::list(std::move(items), SeqKind::generator); }

Value lowered(const Value& v) { return v.is_string() ? Value(py::lower(v.str())) : v; }

const Value* kwarg(const CallArgs& args, std::string_view name) {
  for (const auto& [k, v] : args.kw)
    if (k == name) return &v;
  return nullptr;
}

// Sorts values by key with Python's stable sort; a TypeError from comparing keys ends it.
Status sort_by_keys(std::vector<Value>& items, std::vector<Value> keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status err;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (!err.ok()) return false;
    Result<bool> r = reverse ? less(keys[b], keys[a]) : less(keys[a], keys[b]);
    if (!r.ok()) {
      err = r.status();
      return false;
    }
    return *r;
  });
  LES_RETURN_IF_ERROR(err);
  std::vector<Value> sorted;
  sorted.reserve(items.size());
  for (size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
  return Status();
}

// select / reject (attr: selectattr / rejectattr): Jinja2's select_or_reject.
Result<Value> select_or_reject(Evaluator& ev, const Value& input, const CallArgs& args, bool keep_when,
                               bool attr) {
  if (!input.truthy()) return generator({});
  size_t off = 0;
  Value attribute;
  if (attr) {
    if (args.pos.empty()) return invalid_argument_error("FilterArgumentError: Missing parameter for attribute name");
    attribute = args.pos[0];
    off = 1;
  }
  std::optional<std::string> test_name;
  CallArgs test_args;
  if (args.pos.size() > off) {
    LES_ASSIGN_OR_RETURN(std::string n, to_str(args.pos[off]));
    test_name = std::move(n);
    test_args.pos.assign(args.pos.begin() + static_cast<std::ptrdiff_t>(off + 1), args.pos.end());
    test_args.kw = args.kw;
  }
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<Value> kept;
  for (Value& item : items) {
    Value subject = item;
    if (attr) {
      LES_ASSIGN_OR_RETURN(subject, get_attribute(ev, item, attribute, nullptr, false));
    }
    bool pass;
    if (test_name) {
      LES_ASSIGN_OR_RETURN(pass, ev.test(*test_name, subject, test_args));
    } else {
      pass = subject.truthy();
    }
    if (pass == keep_when) kept.push_back(std::move(item));
  }
  return generator(std::move(kept));
}

}  // namespace

Result<Value> get_attribute(Evaluator& ev, const Value& item, const Value& attribute, const Value* fallback,
                            bool lower) {
  std::vector<Value> parts;
  if (attribute.is_string()) {
    for (std::string& p : py::split(attribute.str(), std::string("."), -1)) {
      const bool digits = !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (digits) {
        auto n = parse_int(p);
        if (!n) return unsupported_construct("an attribute index beyond 64 bits");
        parts.emplace_back(*n);
      } else {
        parts.emplace_back(std::move(p));
      }
    }
  } else if (!attribute.is_none()) {
    parts.push_back(attribute);
  }
  Value v = item;
  for (const Value& part : parts) {
    LES_ASSIGN_OR_RETURN(v, ev.getitem(v, part));
    if (fallback != nullptr && v.is_undefined()) v = *fallback;
  }
  return lower ? lowered(v) : v;
}

Result<Value> filter_map(Evaluator& ev, const Value& input, const CallArgs& args) {
  if (!input.truthy()) return generator({});
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<Value> out;
  out.reserve(items.size());
  if (args.pos.empty() && kwarg(args, "attribute") != nullptr) {
    const Value* fallback = kwarg(args, "default");
    for (const auto& [k, v] : args.kw)
      if (k != "attribute" && k != "default")
        return invalid_argument_error("FilterArgumentError: Unexpected keyword argument '" + k + "'");
    for (const Value& item : items) {
      // Jinja2 replaces an Undefined with the default only when one was given (default=None means none).
      const bool has_default = fallback != nullptr && !fallback->is_none();
      LES_ASSIGN_OR_RETURN(Value v, get_attribute(ev, item, *kwarg(args, "attribute"),
                                                  has_default ? fallback : nullptr, false));
      out.push_back(std::move(v));
    }
    return generator(std::move(out));
  }
  if (args.pos.empty()) return invalid_argument_error("FilterArgumentError: map requires a filter argument");
  LES_ASSIGN_OR_RETURN(std::string name, to_str(args.pos[0]));
  CallArgs rest;
  rest.pos.assign(args.pos.begin() + 1, args.pos.end());
  rest.kw = args.kw;
  for (const Value& item : items) {
    LES_ASSIGN_OR_RETURN(Value v, ev.filter(name, item, rest));
    out.push_back(std::move(v));
  }
  return generator(std::move(out));
}

Result<Value> filter_select(Evaluator& ev, const Value& in, const CallArgs& a) {
  return select_or_reject(ev, in, a, true, false);
}
Result<Value> filter_reject(Evaluator& ev, const Value& in, const CallArgs& a) {
  return select_or_reject(ev, in, a, false, false);
}
Result<Value> filter_selectattr(Evaluator& ev, const Value& in, const CallArgs& a) {
  return select_or_reject(ev, in, a, true, true);
}
Result<Value> filter_rejectattr(Evaluator& ev, const Value& in, const CallArgs& a) {
  return select_or_reject(ev, in, a, false, true);
}

Result<Value> filter_join(Evaluator& ev, const Value& input, const CallArgs& args) {
  ArgBinder b("join", args, {"d", "attribute"});
  LES_RETURN_IF_ERROR(b.status());
  std::string sep;
  if (b.get(0) != nullptr) {
    LES_ASSIGN_OR_RETURN(sep, to_str(*b.get(0)));
  }
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    Value item = items[i];
    if (b.get(1) != nullptr && !b.get(1)->is_none()) {
      LES_ASSIGN_OR_RETURN(item, get_attribute(ev, item, *b.get(1), nullptr, false));
    }
    LES_ASSIGN_OR_RETURN(std::string s, to_str(item));
    if (i > 0) out += sep;
    out += s;
    LES_RETURN_IF_ERROR(ev.check_size(out.size()));
  }
  return Value(std::move(out));
}

Result<Value> filter_sort(Evaluator& ev, const Value& input, const CallArgs& args) {
  ArgBinder b("sort", args, {"reverse", "case_sensitive", "attribute"});
  LES_RETURN_IF_ERROR(b.status());
  const bool reverse = b.get(0) != nullptr && b.get(0)->truthy();
  const bool case_sensitive = b.get(1) != nullptr && b.get(1)->truthy();
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<Value> keys;
  keys.reserve(items.size());
  for (const Value& item : items) {
    LES_ASSIGN_OR_RETURN(Value k, get_attribute(ev, item, b.get_or(2, Value::none()), nullptr, !case_sensitive));
    keys.push_back(std::move(k));
  }
  LES_RETURN_IF_ERROR(sort_by_keys(items, std::move(keys), reverse));
  return Value::list(std::move(items));
}

Result<Value> filter_dictsort(Evaluator&, const Value& input, const CallArgs& args) {
  ArgBinder b("dictsort", args, {"case_sensitive", "by", "reverse"});
  LES_RETURN_IF_ERROR(b.status());
  const bool case_sensitive = b.get(0) != nullptr && b.get(0)->truthy();
  const std::string by = b.get(1) != nullptr && b.get(1)->is_string() ? b.get(1)->str() : "key";
  if (by != "key" && by != "value")
    return invalid_argument_error("FilterArgumentError: You can only sort by either \"key\" or \"value\"");
  const bool reverse = b.get(2) != nullptr && b.get(2)->truthy();
  if (input.is_undefined()) return undefined_use(input);
  if (!input.is_dict()) return type_error(cat("'", type_name(input), "' object has no attribute 'items'"));
  std::vector<Value> items, keys;
  for (const auto& [k, v] : input.dict().items) {
    items.push_back(Value::list({k, v}, SeqKind::tuple));
    const Value& key = by == "key" ? k : v;
    keys.push_back(case_sensitive ? key : lowered(key));
  }
  LES_RETURN_IF_ERROR(sort_by_keys(items, std::move(keys), reverse));
  return Value::list(std::move(items));
}

Result<Value> filter_unique(Evaluator& ev, const Value& input, const CallArgs& args) {
  ArgBinder b("unique", args, {"case_sensitive", "attribute"});
  LES_RETURN_IF_ERROR(b.status());
  const bool case_sensitive = b.get(0) != nullptr && b.get(0)->truthy();
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<Value> seen, out;
  for (Value& item : items) {
    LES_ASSIGN_OR_RETURN(Value key, get_attribute(ev, item, b.get_or(1, Value::none()), nullptr, !case_sensitive));
    if (!hashable(key)) return type_error("unhashable type: '" + type_name(key) + "'");
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) continue;
    seen.push_back(std::move(key));
    out.push_back(std::move(item));
  }
  return generator(std::move(out));
}

namespace {

Result<Value> min_or_max(Evaluator& ev, const Value& input, const CallArgs& args, bool want_max) {
  ArgBinder b(want_max ? "max" : "min", args, {"case_sensitive", "attribute"});
  LES_RETURN_IF_ERROR(b.status());
  const bool case_sensitive = b.get(0) != nullptr && b.get(0)->truthy();
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  LES_ASSIGN_OR_RETURN(Value best_key,
                       get_attribute(ev, items[0], b.get_or(1, Value::none()), nullptr, !case_sensitive));
  for (size_t i = 1; i < items.size(); ++i) {
    LES_ASSIGN_OR_RETURN(Value key, get_attribute(ev, items[i], b.get_or(1, Value::none()), nullptr, !case_sensitive));
    LES_ASSIGN_OR_RETURN(bool better, want_max ? less(best_key, key) : less(key, best_key));
    if (better) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}

}  // namespace

Result<Value> filter_min(Evaluator& ev, const Value& in, const CallArgs& a) { return min_or_max(ev, in, a, false); }
Result<Value> filter_max(Evaluator& ev, const Value& in, const CallArgs& a) { return min_or_max(ev, in, a, true); }

Result<Value> filter_sum(Evaluator& ev, const Value& input, const CallArgs& args) {
  ArgBinder b("sum", args, {"attribute", "start"});
  LES_RETURN_IF_ERROR(b.status());
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  Value total = b.get_or(1, Value(int64_t{0}));
  if (total.is_string()) return type_error("sum() can't sum strings [use ''.join(seq) instead]");
  for (const Value& item : items) {
    Value v = item;
    if (b.get(0) != nullptr && !b.get(0)->is_none()) {
      LES_ASSIGN_OR_RETURN(v, get_attribute(ev, item, *b.get(0), nullptr, false));
    }
    LES_ASSIGN_OR_RETURN(total, binary_op(BinOp::add, total, v, ev.options().limits.max_output_bytes));
  }
  return total;
}

Result<Value> filter_first(Evaluator&, const Value& input, const CallArgs& args) {
  if (!args.pos.empty() || !args.kw.empty()) return type_error("first() takes no arguments");
  if (input.is_list() && input.seq() == SeqKind::generator) {
    const ListData& l = input.list();
    if (l.pos >= l.items.size()) return Value::undefined("No first item, sequence was empty.");
    return l.items[l.pos++];
  }
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Result<Value> filter_last(Evaluator&, const Value& input, const CallArgs& args) {
  if (!args.pos.empty() || !args.kw.empty()) return type_error("last() takes no arguments");
  if (input.is_list() && input.seq() == SeqKind::generator) return type_error("'generator' object is not reversible");
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Result<Value> filter_list(Evaluator&, const Value& input, const CallArgs& args) {
  if (!args.pos.empty() || !args.kw.empty()) return type_error("list() takes no arguments");
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  return Value::list(std::move(items));
}

Result<Value> filter_items(Evaluator&, const Value& input, const CallArgs& args) {
  if (!args.pos.empty() || !args.kw.empty()) return type_error("items() takes no arguments");
  if (input.is_undefined()) return generator({});
  if (!input.is_dict()) return type_error("Can only get item pairs from a mapping.");
  std::vector<Value> out;
  for (const auto& [k, v] : input.dict().items) out.push_back(Value::list({k, v}, SeqKind::tuple));
  return generator(std::move(out));
}

Result<Value> filter_reverse(Evaluator&, const Value& input, const CallArgs& args) {
  if (!args.pos.empty() || !args.kw.empty()) return type_error("reverse() takes no arguments");
  if (input.is_string()) {
    std::u32string cps = py::decode(input.str());
    std::reverse(cps.begin(), cps.end());
    return Value(py::encode(cps));
  }
  const bool reversible = input.is_dict() || input.is_undefined() ||
                          (input.is_list() && input.seq() != SeqKind::generator);
  LES_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::reverse(items.begin(), items.end());
  // reversed(x) is an iterator (a generator here); a generator's items become a list.
  return Value::list(std::move(items), reversible ? SeqKind::generator : SeqKind::list);
}

}  // namespace les::jinja
