// test-jinja-errors.cpp — where errors point (line and column of parse and runtime errors),
// what they say, every limit of jinja::limits, and the API around parse/render (reuse, context
// key order, JSON numbers, the clock).
#include "jinja/jinja.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

using ojson = nlohmann::ordered_json;

struct failure {
    jinja::error_kind kind = jinja::error_kind::syntax;
    uint32_t line = 0, column = 0;
    std::string message, what;
};

// Parses and renders; returns the error (kind none → it rendered).
bool fails(std::string_view src, failure & f, const jinja::render_options & opts = {}, const ojson & ctx = ojson::object(),
           const jinja::parse_options & popts = {}) {
    try {
        jinja::render(jinja::parse(src, popts), ctx, opts);
        return false;
    } catch (const jinja::error & e) {
        f = {e.kind(), e.line(), e.column(), e.message(), e.what()};
        return true;
    }
}

failure must_fail(std::string_view src, const jinja::render_options & opts = {}, const ojson & ctx = ojson::object()) {
    failure f;
    EXPECT_TRUE(fails(src, f, opts, ctx)) << "expected an error from: " << src;
    return f;
}

std::string repeat(const std::string & s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

}  // namespace

TEST(JinjaErrors, ParseErrorsNameLineAndColumn) {
    failure f = must_fail("line one\n{{ 1 + }}");
    EXPECT_EQ(f.kind, jinja::error_kind::syntax);
    EXPECT_EQ(f.line, 2u);
    EXPECT_EQ(f.column, 8u);
    EXPECT_EQ(f.what, "template:2:8: unexpected 'end of print statement'");

    f = must_fail("{% for x in y %}\n  {{ x }}\n");
    EXPECT_EQ(f.kind, jinja::error_kind::syntax);
    EXPECT_NE(f.message.find("Jinja was looking for the following tags: 'endfor' or 'else'"), std::string::npos);
    EXPECT_NE(f.message.find("innermost block that needs to be closed is 'for'"), std::string::npos);

    f = must_fail("ok\n\n   {% frobnicate %}");
    EXPECT_EQ(f.what, "template:3:7: Encountered unknown tag 'frobnicate'.");
    f = must_fail("{% if x %}{% endfor %}{% endif %}");
    EXPECT_EQ(f.what, "template:1:14: Encountered unknown tag 'endfor'.");
    f = must_fail("{{ 'abc }}");
    EXPECT_EQ(f.line, 1u);
    EXPECT_EQ(f.column, 4u);
    f = must_fail("a {# never closed");
    EXPECT_EQ(f.message, "Missing end of comment tag");
    f = must_fail("{{ (1 }}");
    EXPECT_EQ(f.message, "unexpected '}', expected ')'");
    f = must_fail("{% break %}");
    EXPECT_EQ(f.message, "'break' outside of a loop");
    f = must_fail("{% macro m(a=1, b) %}{% endmacro %}");
    EXPECT_EQ(f.message, "non-default argument follows default argument");
    f = must_fail("{{ x is defined is defined }}");
    EXPECT_EQ(f.message, "You cannot chain multiple tests with is");
    f = must_fail("{% include 'other.jinja' %}");
    EXPECT_EQ(f.kind, jinja::error_kind::syntax);
    f = must_fail("{% set 1 = 2 %}");
    EXPECT_EQ(f.message, "can't assign to this expression");
    // columns count code points, not bytes
    f = must_fail("é中😀 {{ ) }}");
    EXPECT_EQ(f.column, 8u);
}

TEST(JinjaErrors, SourceNameAppearsInMessages) {
    jinja::parse_options popts;
    popts.source_name = "chat.jinja";
    try {
        jinja::parse("\n{% if %}", popts);
        FAIL() << "expected a syntax error";
    } catch (const jinja::error & e) {
        EXPECT_EQ(std::string(e.what()).rfind("chat.jinja:2:7: ", 0), 0u) << e.what();
        EXPECT_EQ(e.source_name(), "chat.jinja");
    }
}

TEST(JinjaErrors, RuntimeErrorsPointAtTheFailingExpression) {
    const ojson ctx = {{"d", {{"a", 1}}}, {"s", "x"}};
    failure f;
    ASSERT_TRUE(fails("line\n  {{ d.b.c }}", f, {}, ctx));
    EXPECT_EQ(f.kind, jinja::error_kind::undefined);
    EXPECT_EQ(f.what, "template:2:9: 'dict object' has no attribute 'b'");
    ASSERT_TRUE(fails("{% for i in [1] %}\n{{ s + i }}{% endfor %}", f, {}, ctx));
    EXPECT_EQ(f.kind, jinja::error_kind::type);
    EXPECT_EQ(f.line, 2u);
    EXPECT_EQ(f.message, "can only concatenate str (not \"int\") to str");
    ASSERT_TRUE(fails("{% macro m() %}\n\n   {{ raise_exception('no: ' ~ 1) }}{% endmacro %}{{ m() }}", f, {}, ctx));
    EXPECT_EQ(f.kind, jinja::error_kind::raised);
    EXPECT_EQ(f.message, "no: 1");
    EXPECT_EQ(f.line, 3u);
    EXPECT_EQ(f.column, 7u);
    ASSERT_TRUE(fails("{{ s | from_json }}", f, {}, ctx));
    EXPECT_EQ(f.kind, jinja::error_kind::unknown_name);
    EXPECT_EQ(f.what, "template:1:8: No filter named 'from_json' found.");
}

TEST(JinjaErrors, SandboxForbidsMutation) {
    const ojson ctx = {{"l", {1, 2}}, {"d", {{"a", 1}}}};
    failure f;
    ASSERT_TRUE(fails("{{ l.append(3) }}", f, {}, ctx));
    EXPECT_EQ(f.kind, jinja::error_kind::sandbox);
    EXPECT_EQ(f.message, "access to attribute 'append' of 'list' object is unsafe.");
    ASSERT_TRUE(fails("{% set x = d.update({'b': 2}) %}", f, {}, ctx));
    EXPECT_EQ(f.kind, jinja::error_kind::sandbox);
    // reading the attribute is an undefined value; only using it raises
    EXPECT_EQ(jinja::render(jinja::parse("[{{ l.pop }}]{{ l.pop is defined }}"), ctx), "[]False");
    ASSERT_TRUE(fails("{% set f = l.pop %}{{ f() }}", f, {}, ctx));
    EXPECT_EQ(f.kind, jinja::error_kind::sandbox);
}

TEST(JinjaLimits, ExpressionAndStatementNesting) {
    failure f = must_fail("{{ " + repeat("(", 300) + "1" + repeat(")", 300) + " }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{{ 1" + repeat(" + 1", 400) + " }}");  // built by a loop: bounded by tree height
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{{ x" + repeat(".a", 400) + " }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{{ x" + repeat("|trim", 400) + " }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail(repeat("{% if true %}", 300) + repeat("{% endif %}", 300));
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{{ " + repeat("not ", 300) + "x }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{{ " + repeat("[", 300) + repeat("]", 300) + " }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    // within the limit it works
    EXPECT_EQ(jinja::render(jinja::parse("{{ " + repeat("(", 50) + "1" + repeat(")", 50) + " }}"), {}), "1");
}

TEST(JinjaLimits, MacroRecursion) {
    failure f = must_fail("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("macro calls nested deeper than"), std::string::npos) << f.message;
    // recursion within the limit is fine
    EXPECT_EQ(jinja::render(jinja::parse("{% macro f(n) %}{% if n %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(50) }}"), {})
                  .size(),
              91u);
}

TEST(JinjaLimits, LoopIterationsOutputStringsRangesSteps) {
    jinja::render_options o;
    o.bounds.max_loop_iterations = 1000;
    failure f = must_fail("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", o);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("loop iterations"), std::string::npos);

    o = {};
    o.bounds.max_output_bytes = 1000;
    f = must_fail("{% for i in range(2000) %}x{% endfor %}", o);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{% set s = 'x' * 2000 %}", o);  // one string value over the limit
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{% set ns = namespace(s='ab') %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", o);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);

    f = must_fail("{{ 'x' * 100000000 }}");  // default: 16 MiB
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{{ range(100000000) | length }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{{ [1, 2] * 100000000 }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);

    o = {};
    o.bounds.max_steps = 10000;
    f = must_fail("{% for i in range(5000) %}{{ i + i }}{% endfor %}", o);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("step limit"), std::string::npos);
}

TEST(JinjaLimits, DeepAndCyclicValues) {
    // printing a value nested deeper than max_value_depth is an error, not a stack overflow
    failure f = must_fail(
        "{% set ns = namespace(x=[]) %}{% for i in range(500) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{% set ns = namespace(x=[]) %}{% for i in range(500) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x | tojson }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    // a namespace holding itself (python prints {...} there; the engine refuses)
    f = must_fail("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    // freeing a very deep value takes no deep recursion
    EXPECT_EQ(jinja::render(jinja::parse("{% set ns = namespace(x=[]) %}{% for i in range(200000) %}"
                                         "{% set ns.x = [ns.x] %}{% endfor %}{% set ns.x = 0 %}done"),
                            {}),
              "done");
    EXPECT_EQ(jinja::render(jinja::parse("{% set ns = namespace(n=namespace()) %}{% for i in range(100000) %}"
                                         "{% set ns.n = namespace(next=ns.n) %}{% endfor %}done"),
                            {}),
              "done");
    // macros keep their defining scope alive; chains of them are cut at the end of a render
    EXPECT_EQ(jinja::render(jinja::parse("{% set ns = namespace() %}{% macro m0() %}{% endmacro %}{% set ns.f = m0 %}"
                                         "{% macro step() %}{% macro next() %}{{ step() }}{% endmacro %}"
                                         "{% set ns.f = next %}{% endmacro %}"
                                         "{% for i in range(50000) %}{{ step() }}{% endfor %}done"),
                            {}),
              "done");
}

// Hostile templates (tests/fuzz/seeds-jinja/hostile-*.jinja): each ends in a limit error, never a
// crash, a hang or an unbounded allocation.
TEST(JinjaHostile, NestingOfEveryStatementAndExpression) {
    const std::string caller_macro = "{% macro m() %}{{ caller() }}{% endmacro %}";
    for (const std::string & src : {
             repeat("{% for a in [1] %}", 250) + "x" + repeat("{% endfor %}", 250),
             repeat("{% macro m() %}", 250) + "x" + repeat("{% endmacro %}", 250),
             repeat("{% set x %}", 250) + "x" + repeat("{% endset %}", 250),
             repeat("{% with %}", 250) + "x" + repeat("{% endwith %}", 250),
             repeat("{% filter upper %}", 250) + "x" + repeat("{% endfilter %}", 250),
             caller_macro + repeat("{% call m() %}", 250) + "x" + repeat("{% endcall %}", 250),
             repeat("{% if true %}{% for a in [1] %}", 150) + "x" + repeat("{% endfor %}{% endif %}", 150),
             "{{ " + repeat("-", 400) + "1 }}",
             "{{ a" + repeat("[0]", 400) + " }}",
             "{{ " + repeat("range(", 300) + "1" + repeat(")", 300) + " }}",
             "{{ " + repeat("{'a': ", 300) + "1" + repeat("}", 300) + " }}",
             "{{ " + repeat("(1, ", 300) + "1" + repeat(")", 300) + " }}",
             "{{ " + repeat("1 if x else ", 400) + "2 }}",
             "{{ true" + repeat(" and true", 400) + " }}",
             "{{ 'x' | " + repeat("replace('x', 'y' | ", 300) + "upper" + repeat(")", 300) + " }}",
         }) {
        const failure f = must_fail(src);
        EXPECT_EQ(f.kind, jinja::error_kind::limit) << src.substr(0, 60) << ": " << f.message;
    }
    // flat chains are no nesting: a long comparison chain or concatenation renders
    EXPECT_EQ(jinja::render(jinja::parse("{{ 1" + repeat(" < 2", 400) + " }}"), {}), "False");
    EXPECT_EQ(jinja::render(jinja::parse("{{ 'a'" + repeat(" ~ 'a'", 400) + " }}"), {}), std::string(401, 'a'));
}

TEST(JinjaHostile, MacroRecursionWithoutEnd) {
    for (const char * src : {
             "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",                                   // no argument at all
             "{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}[{{ a(n + 1) }}]{% endmacro %}{{ a(0) }}",  // mutual
             "{% macro m() %}{% call m() %}{{ caller() }}{% endcall %}{% endmacro %}{{ m() }}",  // through call blocks
             "{% set ns = namespace() %}{% macro f() %}{{ ns.g() }}{% endmacro %}{% set ns.g = f %}{{ f() }}",
             "{% macro f(x=f()) %}{% endmacro %}{{ f() }}",                                     // through a default
         }) {
        const failure f = must_fail(src);
        EXPECT_EQ(f.kind, jinja::error_kind::limit) << src;
        EXPECT_NE(f.message.find("macro calls nested deeper than 100"), std::string::npos) << src << ": " << f.message;
    }
    // a recursive loop calling itself on the same items
    const failure f = must_fail("{% set xs = [[1], [2]] %}{% for x in xs recursive %}{{ loop(xs) }}{% endfor %}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit) << f.message;
    // the limit is max_macro_depth
    jinja::render_options o;
    o.bounds.max_macro_depth = 10;
    EXPECT_NE(must_fail("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", o).message.find("deeper than 10"),
              std::string::npos);
}

TEST(JinjaHostile, HugeLoops) {
    // The brief's nested loop: ten million iterations at most, then a limit error.
    const std::string nested = "{% for i in range(10000000) %}{% for j in range(10000000) %}x{% endfor %}{% endfor %}";
    jinja::render_options o;
    o.bounds.max_loop_iterations = 100000;
    o.bounds.max_range_length = 1000000;
    failure f = must_fail(nested, o);  // range() over its bound
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("range() longer than 1000000"), std::string::npos) << f.message;
    f = must_fail("{% for i in range(1000000) %}{% for j in range(1000000) %}x{% endfor %}{% endfor %}", o);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("more than 100000 loop iterations"), std::string::npos) << f.message;
    // a filter inside the loop header counts its iterations too
    f = must_fail("{% for i in range(1000000) if i is odd %}{% endfor %}", o);
    EXPECT_NE(f.message.find("loop iterations"), std::string::npos) << f.message;
}

TEST(JinjaHostile, LoopsLeftEarlyAreChargedForTheirCopy) {
    // each loop copies its items: a loop over a big list left at once is charged for the copy
    // (and frees it), so repeating it ends at the step limit instead of running for hours and
    // keeping every copy until the end of the render
    jinja::render_options o;
    o.bounds.max_steps = 2000000;
    failure f = must_fail("{% set r = range(100000) %}{% for j in range(1000000) %}{% for i in r %}{% break %}{% endfor %}{% endfor %}", o);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("step limit"), std::string::npos) << f.message;
    f = must_fail("{% set r = range(100000) %}{% for j in range(1000000) %}{{ r | first }}{% endfor %}", o);
    EXPECT_NE(f.message.find("step limit"), std::string::npos) << f.message;
    // a loop object kept past its loop keeps its items
    EXPECT_EQ(jinja::render(jinja::parse("{% set ns = namespace() %}{% for i in range(5) %}{% set ns.l = loop %}{% endfor %}"
                                         "{{ ns.l.length }} {{ ns.l.index }} {{ ns.l.last }}"),
                            {}),
              "5 5 True");
}

TEST(JinjaHostile, GrowingValues) {
    // string doubling: one string value over max_output_bytes (16 MiB by default)
    failure f = must_fail("{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("exceeds the limit of 16777216"), std::string::npos) << f.message;
    f = must_fail("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s | replace('a', ns.s) %}{% endfor %}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    f = must_fail("{{ 'x' | center(1000000000) }}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    // list doubling: a list longer than max_range_length, refused before it is allocated (at the
    // default bounds the memory limit comes first: ten million values take 320 MB)
    const std::string doubling = "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}";
    jinja::render_options o;
    o.bounds.max_range_length = 100000;
    f = must_fail(doubling, o);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("sequence concatenation longer than 100000"), std::string::npos) << f.message;
    f = must_fail(doubling);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_NE(f.message.find("memory limit"), std::string::npos) << f.message;
    // a string taken apart into more characters than max_range_length
    o = {};
    o.bounds.max_range_length = 1000;
    f = must_fail("{{ ('x' * 2000) | list | length }}", o);
    EXPECT_NE(f.message.find("characters longer than 1000"), std::string::npos) << f.message;
    f = must_fail("{% for c in 'é' * 2000 %}{% endfor %}", o);
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_EQ(jinja::render(jinja::parse("{{ ('é' * 1000) | list | length }}"), {}, o), "1000");
    // output past max_output_bytes
    o = {};
    o.bounds.max_output_bytes = 100000;
    f = must_fail("{% for i in range(1000) %}{% for j in range(1000) %}x{% endfor %}{% endfor %}", o);
    EXPECT_NE(f.message.find("output exceeds the limit of 100000 bytes"), std::string::npos) << f.message;
}

TEST(JinjaHostile, LiveMemoryAtTheDefaultBound) {
    // 400 strings of 16 MB kept alive would take 6.4 GB: the render stops at 256 MiB, at once
    const auto start = std::chrono::steady_clock::now();
    failure f = must_fail(
        "{% set s = 'x' * 16000000 %}{% set ns = namespace(l=[]) %}{% for i in range(400) %}"
        "{% set ns.l = ns.l + [s ~ i] %}{% endfor %}");
    EXPECT_EQ(f.kind, jinja::error_kind::limit);
    EXPECT_EQ(f.message, "render exceeded the memory limit (268435456 bytes)");
    f = must_fail("{% set ns = namespace(l=[]) %}{% for i in range(400) %}{% set ns.l = ns.l + [range(1000000)] %}{% endfor %}");
    EXPECT_EQ(f.message, "render exceeded the memory limit (268435456 bytes)");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 20.0);  // well under a second in a release build
}

TEST(JinjaHostile, StepBudgetIsTheTimeBound) {
    // exponential work under every other limit: 2^40 macro calls, sorting ten million values
    jinja::render_options o;
    o.bounds.max_steps = 1000000;
    for (const char * src : {
             "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
             "{{ range(10000000) | list | sort | reverse | join(',') | length }}",
             "{% for i in range(10000000) %}{{ i ~ i }}{% endfor %}",
             "{% set d = {'a': [1, 2, {'b': 'c'}]} %}{% for i in range(10000000) %}{% if d | tojson == '' %}{% endif %}{% endfor %}",
         }) {
        const failure f = must_fail(src, o);
        EXPECT_EQ(f.kind, jinja::error_kind::limit) << src;
        EXPECT_NE(f.message.find("step limit (1000000)"), std::string::npos) << src << ": " << f.message;
    }
    // a macro call is charged for its frame: a loop of empty calls runs out of steps sooner than
    // a loop of as many nodes without calls
    o.bounds.max_steps = 100000;
    o.bounds.max_loop_iterations = 1000000;
    const std::string calls = "{% macro f() %}{% endmacro %}{% for i in range(N) %}{{ f() }}{% endfor %}";
    std::string src = calls;
    src.replace(src.find('N'), 1, "6000");
    EXPECT_EQ(must_fail(src, o).kind, jinja::error_kind::limit);
    src = calls;
    src.replace(src.find('N'), 1, "1000");
    EXPECT_EQ(jinja::render(jinja::parse(src), {}, o), "");
}

// The live memory of a render: what it holds at once, not what it made over time.
TEST(JinjaMemory, ValuesHeldAtOnceEndInALimitError) {
    jinja::render_options o;
    o.bounds.max_memory_bytes = 1u << 20;
    for (const char * src : {
             // strings kept in a list
             "{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = ns.l + ['x' * 10000 ~ i] %}{% endfor %}",
             // lists of ranges
             "{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = ns.l + [range(10000)] %}{% endfor %}",
             // dicts built up in a loop
             "{% set ns = namespace(d={}) %}{% for i in range(100000) %}{% set ns.d = {'next': ns.d, 'i': i} %}{% endfor %}",
             "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [{'k': i}] %}{% endfor %}",
             // namespaces (their attributes) chained
             "{% set ns = namespace(n=none) %}{% for i in range(100000) %}{% set ns.n = namespace(next=ns.n, i=i) %}{% endfor %}",
             // a string taken apart into characters: a value each
             "{{ ('x' * 100000) | list | length }}",
             // every nested macro call holds a copy of the loop's items ...
             "{% set big = range(2000) %}{% macro m(n) %}{% for x in big %}{% if n %}{{ m(n - 1) }}{% endif %}{% break %}"
             "{% endfor %}{% endmacro %}{{ m(90) }}",
             // ... or the text it has rendered so far
             "{% set s = 'x' * 20000 %}{% macro m(n) %}{{ s }}{% if n %}{{ m(n - 1) | length }}{% endif %}{% endmacro %}"
             "{{ m(90) | length }}",
         }) {
        const failure f = must_fail(src, o);
        EXPECT_EQ(f.kind, jinja::error_kind::limit) << src << ": " << f.message;
        EXPECT_EQ(f.message, "render exceeded the memory limit (1048576 bytes)") << src;
    }
    // the render context counts; the parsed template's constants do not
    const ojson big = {{"s", std::string(2u << 20, 'x')}};
    EXPECT_EQ(must_fail("{{ s | length }}", o, big).kind, jinja::error_kind::limit);
    EXPECT_EQ(jinja::render(jinja::parse("{{ '" + std::string(2u << 20, 'x') + "' | length }}"), {}, o), "2097152");
    // what the limit is made of: about what the values take, not a multiple of it
    o.bounds.max_memory_bytes = 10u << 20;
    int most = 0;
    for (int k = 1; k <= 20; ++k) {
        const std::string src = "{% set ns = namespace(l=[]) %}{% for i in range(" + std::to_string(k) +
                                ") %}{% set ns.l = ns.l + ['x' * 1000000 ~ i] %}{% endfor %}{{ ns.l | length }}";
        failure f;
        if (fails(src, f, o)) break;
        most = k;
    }
    EXPECT_GE(most, 5);  // ten 1 MB strings (and two being made) fit in 10 MiB, less the overheads
    EXPECT_LE(most, 10);
}

TEST(JinjaMemory, ValuesMadeAndDroppedInALoopAreGivenBack) {
    jinja::render_options o;
    o.bounds.max_memory_bytes = 2u << 20;
    // some 100 MB made in all, about 1 MB held at a time
    const std::string src =
        "{% set ns = namespace(s='') %}{% for i in range(100) %}{% set big = 'x' * 200000 ~ i %}"
        "{% set l = range(10000) | list %}{% set d = {'big': big, 'l': l} %}{% set ns.s = d.big %}"
        "{% set tmp = namespace(v=l, w=big) %}{% for c in l %}{% if loop.index > 2 %}{% break %}{% endif %}{% endfor %}"
        "{% set text %}{{ big }}{% endset %}{% endfor %}{{ ns.s | length }}";
    EXPECT_EQ(jinja::render(jinja::parse(src), {}, o), "200002");
    // a failed render leaves nothing charged behind: the next one on the thread starts at zero
    failure f;
    EXPECT_TRUE(fails("{% set s = 'x' * 3000000 %}", f, o));
    EXPECT_EQ(jinja::render(jinja::parse(src), {}, o), "200002");
}

TEST(JinjaMemory, EachRenderHasItsOwnMeter) {
    // renders of one parsed template on several threads at once: each is bounded on its own
    jinja::render_options o;
    o.bounds.max_memory_bytes = 1u << 20;
    const jinja::parsed_template fits = jinja::parse("{% set s = 'x' * n %}{{ (s ~ s) | length }}");
    std::vector<std::thread> threads;
    std::vector<std::string> outs(4);
    std::vector<int> failures(4, 0);
    for (int k = 0; k < 4; ++k) {
        threads.emplace_back([&, k] {
            for (int i = 0; i < 20; ++i) {
                outs[static_cast<size_t>(k)] = jinja::render(fits, {{"n", 300000}}, o);
                try {
                    jinja::render(fits, {{"n", 600000}}, o);
                } catch (const jinja::error & e) {
                    if (e.kind() == jinja::error_kind::limit) failures[static_cast<size_t>(k)]++;
                }
            }
        });
    }
    for (auto & th : threads) th.join();
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(outs[static_cast<size_t>(k)], "600000");
        EXPECT_EQ(failures[static_cast<size_t>(k)], 20);
    }
    // a parse and a render within a render (from the clock): the inner template's constants are
    // charged to neither render, and its render has a meter of its own
    std::string inner;
    o.clock = [&inner, o] {
        const jinja::parsed_template t = jinja::parse("{{ '" + std::string(2u << 20, 'x') + "' | length }}");
        inner = jinja::render(t, {}, o);
        return std::tm{};
    };
    EXPECT_EQ(jinja::render(jinja::parse("{{ strftime_now('%Y') }}"), {}, o), "1900");
    EXPECT_EQ(inner, "2097152");
}

TEST(JinjaApi, ParseOnceRenderManyTimes) {
    const jinja::parsed_template t = jinja::parse("{{ greeting }}, {{ name | default('you') }}!\n");
    EXPECT_EQ(jinja::render(t, {{"greeting", "Hi"}, {"name", "Ann"}}), "Hi, Ann!");
    EXPECT_EQ(jinja::render(t, {{"greeting", "Hello"}}), "Hello, you!");
    EXPECT_EQ(jinja::render(t, nullptr), ", you!");
    jinja::parsed_template moved = jinja::parse("x");
    moved = jinja::parse("{{ 1 + 1 }}");
    EXPECT_EQ(jinja::render(moved, {}), "2");
    EXPECT_THROW(jinja::render(t, ojson::array({1, 2})), jinja::error);
}

TEST(JinjaApi, JsonInputKeepsOrderAndNumberTypes) {
    const ojson ctx = ojson::parse(R"({"d": {"zeta": 1, "alpha": 2.0, "mid": [true, null]}, "u": 18446744073709551615})");
    EXPECT_EQ(jinja::render(jinja::parse("{{ d | tojson }} {{ d }} {% for k in d %}{{ k }}{% endfor %}"), ctx),
              "{\"zeta\": 1, \"alpha\": 2.0, \"mid\": [true, null]} {'zeta': 1, 'alpha': 2.0, 'mid': [True, None]} zetaalphamid");
    EXPECT_EQ(jinja::render(jinja::parse("{{ u }}"), ctx), "1.8446744073709552e+19");
}

TEST(JinjaApi, ClockAndMarkup) {
    jinja::render_options o;
    o.clock = [] {
        std::tm t{};
        t.tm_year = 99;
        t.tm_mon = 11;
        t.tm_mday = 31;
        t.tm_hour = 23;
        t.tm_min = 59;
        t.tm_wday = 5;
        return t;
    };
    EXPECT_EQ(jinja::render(jinja::parse("{{ strftime_now('%Y-%m-%d %H:%M %a %b') }}"), {}, o), "1999-12-31 23:59 Fri Dec");
    const std::string now = jinja::render(jinja::parse("{{ strftime_now('%Y') }}"), {});
    EXPECT_EQ(now.size(), 4u);
    // Markup + str escapes the str (the functionary template's tool list)
    const ojson ctx = {{"t", {{"name", "x'"}}}};
    EXPECT_EQ(jinja::render(jinja::parse("{{ \"Use '\"|safe + t.name + \"'\\n\"|safe + t | tojson() }}"), ctx),
              "Use 'x&#39;'\n{&#34;name&#34;: &#34;x&#39;&#34;}");
}

TEST(JinjaApi, OneParsedTemplateRendersFromSeveralThreads) {
    const jinja::parsed_template t = jinja::parse(
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
        "{{ m.role | upper }}: {{ m.content | trim }}\n{% endfor %}{{ ns.n }} {{ 'lit' ~ suffix }}");
    std::vector<std::thread> threads;
    std::vector<std::string> outs(4);
    for (int k = 0; k < 4; ++k) {
        threads.emplace_back([&t, &outs, k] {
            const ojson ctx = {{"messages", {{{"role", "user"}, {"content", " hi "}}}}, {"suffix", std::to_string(k)}};
            for (int i = 0; i < 200; ++i) outs[static_cast<size_t>(k)] = jinja::render(t, ctx);
        });
    }
    for (auto & th : threads) th.join();
    for (int k = 0; k < 4; ++k) EXPECT_EQ(outs[static_cast<size_t>(k)], "USER: hi\n1 lit" + std::to_string(k));
}
