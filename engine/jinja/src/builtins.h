// builtins.h — the filter and test tables (internal): every builtin filter has this signature.
#pragma once

#include "interp.h"

#include <functional>

namespace jinja {

using filter_fn = value (*)(interp & in, const value & input, call_args & args);
using test_fn = bool (*)(interp & in, const value & input, call_args & args);

filter_fn find_seq_filter(std::string_view name);  // filters-seq.cpp
filter_fn find_filter(std::string_view name);      // filters.cpp
test_fn find_test(std::string_view name);          // tests.cpp

// jinja2's make_attrgetter: "a.b.0" looks up item a, then b, then 0.
std::function<value(const value &)> attr_getter(interp & in, const value & attribute, const value * fallback = nullptr);
// python's len(); TypeError for values without one.
int64_t py_len(const value & v);
// a case-insensitive sort key where case_sensitive is false (lower-cased strings)
value ignore_case(const value & v, bool case_sensitive);

}  // namespace jinja
