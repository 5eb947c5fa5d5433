// Jinja2's built-in filters and tests as transformers' environment has them
// (its tojson replaces Jinja's: json.dumps with ensure_ascii=False, indent,
// separators and sort_keys).
//
// Implemented filters: abs, attr, capitalize, center, count, d, default,
// dictsort, first, float, indent, int, items, join, last, length, list,
// lower, map, max, min, reject, rejectattr, replace, reverse, round, safe,
// select, selectattr, sort, string, sum, title, tojson, trim, unique, upper,
// wordcount. The other Jinja2 filters (batch, escape, filesizeformat, format,
// groupby, pprint, random, slice, striptags, truncate, urlencode, urlize,
// wordwrap, xmlattr, ...) are refused as unsupported when reached.
//
// Generators: map, select, reject, selectattr, rejectattr, unique and items
// return Python generators in Jinja2 (always true, no len(), printed as
// "<generator ...>"); they do here too, but are computed eagerly.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "core/chat/jinja/eval.h"

namespace les::jinja {

using FilterFn = Result<Value> (*)(Evaluator& ev, const Value& input, const CallArgs& args);
using TestFn = Result<bool> (*)(Evaluator& ev, const Value& input, const CallArgs& args);

// The implementation of a filter / test, or nullptr.
FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);

// The sequence filters (filters_seq.cpp), for find_filter's table.
Result<Value> filter_map(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_select(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_reject(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_selectattr(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_rejectattr(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_join(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_sort(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_dictsort(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_unique(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_min(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_max(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_sum(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_first(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_last(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_list(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_items(Evaluator& ev, const Value& input, const CallArgs& args);
Result<Value> filter_reverse(Evaluator& ev, const Value& input, const CallArgs& args);

// Jinja2's make_attrgetter: item[part] for each dot-separated part of
// `attribute` (digit parts as ints), Undefined replaced by `fallback` when
// given, strings lower-cased when `lower`.
Result<Value> get_attribute(Evaluator& ev, const Value& item, const Value& attribute, const Value* fallback,
                            bool lower);

}  // namespace les::jinja
