// test-jinja-language.cpp — the language, feature by feature: whitespace control and the
// trim/lstrip settings, literals, operators, access, statements, macros, filters, tests, methods,
// globals, undefined values, type errors, python repr and tojson. The expected texts and errors
// are python jinja2's (3.1, ImmutableSandboxedEnvironment(trim_blocks, lstrip_blocks) with
// transformers' tojson/raise_exception/strftime_now), recorded from it by record-cases.py (which
// prints the TEST bodies below; the cases themselves are listed there).
#include "jinja/jinja.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace {

using ojson = nlohmann::ordered_json;

const ojson & context() {
    static const ojson ctx = ojson::parse(R"json({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}], "d": {"b": 1, "a": [1, 2], "s": "x'y"}, "n": null, "t": true, "fl": 1.5, "i": 7, "s": "Hello World", "u": "é中😀x", "l": [3, 1, 2], "e": [], "nested": {"x": {"y": {"z": 1}}}, "big": 12345678901234, "tools": [{"name": "get_weather", "price": 899.99, "tags": ["a", "b"], "ok": true, "none": null}]})json");
    return ctx;
}

std::tm fixed_time() {  // 2026-01-15 00:00:00, a Thursday
    std::tm t{};
    t.tm_year = 126;
    t.tm_mday = 15;
    t.tm_wday = 4;
    t.tm_yday = 14;
    return t;
}

jinja::render_options options() {
    jinja::render_options o;
    o.clock = fixed_time;
    return o;
}

// The render, or "ERROR(kind): what" when it fails.
std::string render_or_error(std::string_view src, const ojson & ctx = context()) {
    try {
        return jinja::render(jinja::parse(src), ctx, options());
    } catch (const jinja::error & e) {
        return std::string("ERROR(") + jinja::error_kind_name(e.kind()) + "): " + e.what();
    }
}

void expect_fails(std::string_view src, jinja::error_kind kind, std::string_view message) {
    try {
        const std::string out = jinja::render(jinja::parse(src), context(), options());
        ADD_FAILURE() << "template: " << src << "\nrendered '" << out << "', expected a "
                      << jinja::error_kind_name(kind) << " error: " << message;
    } catch (const jinja::error & e) {
        EXPECT_EQ(jinja::error_kind_name(e.kind()), std::string(jinja::error_kind_name(kind)))
            << "template: " << src << "\nerror: " << e.what();
        EXPECT_NE(e.message().find(message), std::string::npos)
            << "template: " << src << "\nerror: " << e.message() << "\nexpected to contain: " << message;
    }
}

}  // namespace

#define EXPECT_RENDER(src, want) EXPECT_EQ(render_or_error(src), want) << "template: " << (src)
#define EXPECT_FAILS(src, kind, message) expect_fails(src, jinja::error_kind::kind, message)

TEST(JinjaLanguage, Whitespace) {
    EXPECT_RENDER("a\n{% if t %}\nb\n{% endif %}\nc", "a\nb\nc");
    EXPECT_RENDER("a\n    {% if t %}\n    b\n    {% endif %}\nc", "a\n    b\nc");
    EXPECT_RENDER("a  {%- if t -%}  b  {%- endif -%}  c", "abc");
    EXPECT_RENDER("a {{- s -}} b", "aHello Worldb");
    EXPECT_RENDER("a\n  {{ s }}\n", "a\n  Hello World");
    EXPECT_RENDER("x  {%+ if t %}y{% endif %}", "x  y");
    EXPECT_RENDER("{% if t +%}\nkeep\n{% endif %}", "\nkeep\n");
    EXPECT_RENDER("a\n{# comment #}\nb", "a\nb");
    EXPECT_RENDER("a\n  {#- c -#}\n  b", "ab");
    EXPECT_RENDER("line1\r\nline2\r\n", "line1\nline2");
    EXPECT_RENDER("trailing\n\n", "trailing\n");
    EXPECT_RENDER("{% for x in l %}\n  {{ x }}\n{% endfor %}\n", "  3\n  1\n  2\n");
    EXPECT_RENDER("{% raw %}{{ not }}{% endraw %}", "{{ not }}");
    EXPECT_RENDER("a\n  {% raw %}\n{{ x }}\n  {% endraw %}\nb", "a\n\n{{ x }}\nb");
    EXPECT_RENDER("{{ '}}' }}", "}}");
    EXPECT_RENDER("{{ {'a': {'b': 1}} }}", "{'a': {'b': 1}}");
    EXPECT_RENDER("  {% set x = 1 %}\n  {{ x }}", "  1");
    EXPECT_RENDER("{% if t %}   \n{% endif %}x", "   \nx");
}

TEST(JinjaLanguage, Literals) {
    EXPECT_RENDER("{{ 'a\\tb\\n' }}|{{ \"q\\\"\" }}|{{ 'it\\'s' }}", "a\tb\n|q\"|it's");
    EXPECT_RENDER("{{ '\\x41\\u00e9\\U0001F600\\101' }}", "Aé😀A");
    EXPECT_RENDER("{{ 'a' 'b' \"c\" }}", "abc");
    EXPECT_RENDER("{{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1.5e3 }} {{ 2.0 }} {{ 1e-5 }} {{ 0.25 }}", "1000 31 15 5 1500.0 2.0 1e-05 0.25");
    EXPECT_RENDER("{{ [1, 'a', none, true, 1.0] }}", "[1, 'a', None, True, 1.0]");
    EXPECT_RENDER("{{ (1,) }} {{ (1, 2) }} {{ () }}", "(1,) (1, 2) ()");
    EXPECT_RENDER("{{ {'a': 1, 'b': [True, False]} }}", "{'a': 1, 'b': [True, False]}");
    EXPECT_RENDER("{{ True }} {{ false }} {{ None }} {{ none }}", "True False None None");
    EXPECT_RENDER("{{ 'x' ~ none ~ 1 ~ [1] ~ {'k': 'v'} }}", "xNone1[1]{'k': 'v'}");
    EXPECT_RENDER("{{ \"it's\" }} {{ [\"it's\", 'say \"hi\"', 'both \\' \"'] }}", "it's [\"it's\", 'say \"hi\"', 'both \\' \"']");
    EXPECT_RENDER("{{ ['\\n\\t\\\\', '\\x00', 'é中😀'] }}", "['\\n\\t\\\\', '\\x00', 'é中😀']");
    EXPECT_RENDER("{{ 1e16 }} {{ 123456789.0 }} {{ 0.1 + 0.2 }} {{ 1/3 }} {{ 10/2 }} {{ -0.0 }} {{ 1e22 }} {{ 1.5e-7 }}", "1e+16 123456789.0 0.30000000000000004 0.3333333333333333 5.0 -0.0 1e+22 1.5e-07");
}

TEST(JinjaLanguage, Operators) {
    EXPECT_RENDER("{{ 7 + 3 }} {{ 7 - 10 }} {{ 7 * 3 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}", "10 -3 21 3.5 3 -4 1 2 1024 0.5");
    EXPECT_RENDER("{{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 1 + true }}", "3.0 0.5 64 4 2");
    EXPECT_RENDER("{{ 1.0 // 0.1 }} {{ 1.0 % 0.1 }} {{ -1 // 0.3 }} {{ 2.5 is odd }} {{ 2.5 is even }} {{ 3.0 is odd }} {{ 'x' % zz }} {{ 'abc' % [1] }}", "9.0 0.09999999999999995 -4.0 False False True x abc");
    EXPECT_RENDER("{{ 'ab' * 3 }} {{ 3 * 'ab' }} {{ [1] * 3 }} {{ 'ab' * 0 }}", "ababab ababab [1, 1, 1] ");
    EXPECT_RENDER("{{ 'a' + 'b' }} {{ [1] + [2, 3] }} {{ (1,) + (2,) }}", "ab [1, 2, 3] (1, 2)");
    EXPECT_RENDER("{{ 1 == 1.0 }} {{ 1 != 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 2 <= 2 }} {{ 3 > 2 > 1 }} {{ 1 < 3 > 2 }}", "True True True True True True True");
    EXPECT_RENDER("{{ 'a' in 'cat' }} {{ 1 in [1, 2] }} {{ 'b' in {'b': 1} }} {{ 3 not in l }} {{ 'x' in e }}", "True True True False False");
    EXPECT_RENDER("{{ t and 'yes' }} {{ n or 'fallback' }} {{ not t }} {{ not n and 1 }} {{ 0 or '' or [] }}", "yes fallback False 1 []");
    EXPECT_RENDER("{{ 'a' if t else 'b' }} {{ 'a' if n else 'b' }} {{ 'a' if n }}|", "a b |");
    EXPECT_RENDER("{{ 'x' if t if t else 'z' }}", "x");
    EXPECT_RENDER("{{ -i }} {{ +fl }} {{ -(1 + 2) }} {{ (1 + 2) * 3 }}", "-7 1.5 -3 9");
    EXPECT_FAILS("{{ 'a' ~ 1 + 2 }} {{ 1 + 2 ~ 'b' }}", type, "can only concatenate str (not \"int\") to str");
    EXPECT_RENDER("{{ '%s is %d years, %.2f%%' % ('Bob', 42, 3.14159) }} {{ '%(a)s-%(b)s' % {'a': 1, 'b': 2} }} {{ '%5s|%-5s|%05d' % ('a', 'b', 42) }}", "Bob is 42 years, 3.14% 1-2     a|b    |00042");
    EXPECT_RENDER("{{ '%s' % [1, 2] }} {{ '%r' % 'x' }} {{ '%x %X %o' % (255, 255, 8) }}", "[1, 2] 'x' ff FF 10");
    EXPECT_RENDER("{{ 'ab' == 'ab' }} {{ [1, 2] == [1, 2] }} {{ {'a': 1, 'b': 2} == {'b': 2, 'a': 1} }} {{ (1, 2) == [1, 2] }} {{ none == none }}", "True True True False True");
}

TEST(JinjaLanguage, Access) {
    EXPECT_RENDER("{{ d.b }} {{ d['b'] }} {{ d.a[1] }} {{ d.a.0 }} {{ nested.x.y.z }} {{ nested['x']['y'] }}", "1 1 2 1 1 {'z': 1}");
    EXPECT_RENDER("{{ l[0] }} {{ l[-1] }} {{ l[5] }}|{{ s[0] }} {{ s[-1] }} {{ u[1] }} {{ u[-2] }}", "3 2 |H d 中 😀");
    EXPECT_RENDER("{{ l[1:] }} {{ l[:2] }} {{ l[::-1] }} {{ l[::2] }} {{ l[-2:] }} {{ l[5:] }} {{ l[1:-1] }}", "[1, 2] [3, 1] [2, 1, 3] [3, 2] [1, 2] [] [1]");
    EXPECT_RENDER("{{ s[:5] }} {{ s[::-1] }} {{ u[::-1] }} {{ u[1:3] }} {{ s[-5:] }} {{ s[10:2:-3] }}", "Hello dlroW olleH x😀中é 中😀 World doo");
    EXPECT_RENDER("{{ d.missing }}|{{ d.missing is defined }}|{{ d['missing'] is undefined }}", "|False|True");
    EXPECT_RENDER("{{ messages[0].role }} {{ messages[-1]['tool_calls'][0].function.name }}", "system f");
    EXPECT_RENDER("{{ d.get('b') }} {{ d.get('zz') }} {{ d.get('zz', 5) }} {{ d.keys() | list }} {{ d.values() | list }} {{ d.items() | list }}", "1 None 5 ['b', 'a', 's'] [1, [1, 2], \"x'y\"] [('b', 1), ('a', [1, 2]), ('s', \"x'y\")]");
    EXPECT_RENDER("{{ d.items() }} {{ d.keys() }}", "dict_items([('b', 1), ('a', [1, 2]), ('s', \"x'y\")]) dict_keys(['b', 'a', 's'])");
    EXPECT_RENDER("{{ (1, 2)[0] }} {{ [[1, 2], [3]][0][1] }}", "1 2");
}

TEST(JinjaLanguage, Statements) {
    EXPECT_RENDER("{% if n %}a{% elif i > 5 %}b{% else %}c{% endif %}", "b");
    EXPECT_RENDER("{% if e %}a{% elif n %}b{% else %}c{% endif %}", "c");
    EXPECT_RENDER("{% for x in l %}{{ x }}{% else %}empty{% endfor %}|{% for x in e %}{{ x }}{% else %}empty{% endfor %}", "312|empty");
    EXPECT_RENDER("{% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }},{% endfor %}", "1032TrueFalse3,2121FalseFalse3,3210FalseTrue3,");
    EXPECT_RENDER("{% for x in l %}{{ loop.previtem }}-{{ x }}-{{ loop.nextitem }};{% endfor %}", "-3-1;3-1-2;1-2-;");
    EXPECT_RENDER("{% for x in l %}{{ loop.cycle('a', 'b') }}{% endfor %}", "aba");
    EXPECT_RENDER("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", "b=1;a=[1, 2];s=x'y;");
    EXPECT_RENDER("{% for k in d %}{{ k }}{% endfor %} {% for c in 'abc' %}{{ c }}.{% endfor %}", "bas a.b.c.");
    EXPECT_RENDER("{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}", "3 7 ");
    EXPECT_RENDER("{% for (a, b), c in [([1, 2], 3)] %}{{ a }}{{ b }}{{ c }}{% endfor %}", "123");
    EXPECT_RENDER("{% for x in l if x > 1 %}{{ x }}:{{ loop.index }}/{{ loop.length }} {% endfor %}", "3:1/2 2:2/2 ");
    EXPECT_RENDER("{% for x in l %}{% if x == 1 %}{% break %}{% endif %}{{ x }}{% endfor %}", "3");
    EXPECT_RENDER("{% for x in l %}{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}", "32");
    EXPECT_RENDER("{% for x in [1, 2] %}{% for y in [3, 4] %}{{ loop.index }}{{ x }}{{ y }} {% endfor %}{{ loop.index }}|{% endfor %}", "113 214 1|123 224 2|");
    EXPECT_RENDER("{% set x = 1 %}{% for i in range(3) %}{{ x }}{% set x = x + 1 %}{{ x }},{% endfor %}{{ x }}", "12,12,12,1");
    EXPECT_RENDER("{% set ns = namespace(c=0, items=[]) %}{% for i in range(3) %}{% set ns.c = ns.c + i %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.c }} {{ ns.items }}", "3 [0, 1, 2]");
    EXPECT_RENDER("{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns.zz is defined }}", "12False");
    EXPECT_RENDER("{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c, d = 'xy' %}{{ c }}{{ d }}", "12xy");
    EXPECT_RENDER("{% set x %}  block {{ i }}  {% endset %}[{{ x }}]", "[  block 7  ]");
    EXPECT_RENDER("{% set x | trim | upper %}  block  {% endset %}[{{ x }}]", "[BLOCK]");
    EXPECT_RENDER("{% filter upper %}hello {{ s }}{% endfilter %}", "HELLO HELLO WORLD");
    EXPECT_RENDER("{% filter trim %}   padded   {% endfilter %}|", "padded|");
    EXPECT_RENDER("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a is defined }}", "3False");
    EXPECT_RENDER("{% generation %}gen {{ i }}{% endgeneration %}", "gen 7");
    EXPECT_RENDER("{% for i in range(3) %}{{ i }}{% endfor %} {% for i in range(1, 7, 2) %}{{ i }}{% endfor %} {% for i in range(3, 0, -1) %}{{ i }}{% endfor %}", "012 135 321");
    EXPECT_RENDER("{% print 'printed' %}", "printed");
    EXPECT_RENDER("{% block b %}in block{% endblock %}", "in block");
    EXPECT_RENDER("{% if t %}{% set inner = 5 %}{% endif %}{{ inner }}", "5");
    EXPECT_RENDER("{% for x in [1] %}{% set leaked = 1 %}{% endfor %}{{ leaked is defined }}", "False");
    EXPECT_RENDER("{% for x in l recursive %}{{ x }}{% endfor %}", "312");
    EXPECT_RENDER("{% for item in [[1, [2, 3]], 4] recursive %}[{% if item is iterable %}{{ loop(item) }}{% else %}{{ item }}@{{ loop.depth }}{% endif %}]{% endfor %}", "[[1@2][[2@3][3@3]]][4@1]");
    EXPECT_RENDER("{% for x in [1, 1, 2] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}", "12");
    EXPECT_RENDER("{% generation %}{% set g1 = 1 %}{{ g1 }}{% endgeneration %}{{ g1 is defined }}", "1False");
    EXPECT_RENDER("{% filter upper %}{% set f1 = 1 %}{% endfilter %}{{ f1 is defined }} {% set b1 %}{% set f2 = 1 %}{% endset %}{{ f2 is defined }}", "False False");
    EXPECT_RENDER("{% with %}{% set w1 = 1 %}{% endwith %}{{ w1 is defined }}", "False");
    EXPECT_RENDER("{{ 1, 2 }}", "(1, 2)");
}

TEST(JinjaLanguage, Macros) {
    EXPECT_RENDER("{% macro m(a, b=2, c='x') %}{{ a }}-{{ b }}-{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ m(1, c='y') }} {{ m(a=5, b=6) }}", "1-2-x 1-3-x 1-2-y 5-6-x");
    EXPECT_RENDER("{% macro m(a) %}[{{ a }}]{% endmacro %}{{ m() }}|{{ m('x') ~ 'y' }}", "[]|[x]y");
    EXPECT_RENDER("{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k=3) }}", "(1, 2){'k': 3}");
    EXPECT_RENDER("{% macro outer() %}<{{ caller() }}>{% endmacro %}{% call outer() %}inside {{ i }}{% endcall %}", "<inside 7>");
    EXPECT_RENDER("{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) each([1, 2]) %}({{ v }}){% endcall %}", "(1)(2)");
    EXPECT_RENDER("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}", "4321");
    EXPECT_RENDER("{% macro m() %}{{ y }}{% endmacro %}{% set y = 1 %}{{ m() }}{% set y = 2 %}{{ m() }}", "12");
    EXPECT_RENDER("{% macro m(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m('hi') }}", "hi!");
    EXPECT_RENDER("{% macro m() %}{% set local = 1 %}{{ local }}{% endmacro %}{{ m() }}{{ local is defined }}", "1False");
    EXPECT_RENDER("{% macro m() %}x{% endmacro %}{{ m }}", "<Macro 'm'>");
    EXPECT_RENDER("{% macro m(p, s=s) %}[{{ s }}]{% endmacro %}{{ m(1) }}", "[]");
}

TEST(JinjaLanguage, FiltersString) {
    EXPECT_RENDER("{{ '  a b  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ s | upper }} {{ s | lower }} {{ 'hello world' | capitalize }} {{ \"hello world's-end (x)\" | title }}", "a b|a|HELLO WORLD hello world Hello world Hello World's-End (X)");
    EXPECT_RENDER("{{ s | replace('o', '0') }} {{ s | replace('o', '0', 1) }} {{ s | length }} {{ u | length }} {{ s | wordcount }} {{ 'one two  three' | wordcount }}", "Hell0 W0rld Hell0 World 11 4 2 3");
    EXPECT_RENDER("{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'x\\ny' | indent('> ') }}", "a\n    b\n\n    c|  a\n  b|a\n  \n  b|x\n> y");
    EXPECT_RENDER("{{ 1 | string }} {{ [1, 'a'] | string }} {{ none | string }} {{ 'x' | string }}", "1 [1, 'a'] None x");
    EXPECT_RENDER("{{ '<a&b>' | e }} {{ '<a>' | escape }} {{ ('<a>' | safe) ~ '<b>' }} {{ '<a>' | safe + '<b>' }} {{ '<b>' + '<a>' | safe }}", "&lt;a&amp;b&gt; &lt;a&gt; <a><b> <a>&lt;b&gt; &lt;b&gt;<a>");
    EXPECT_RENDER("{{ 'abc' | center(9) }}|{{ 'a long sentence here' | truncate(9) }}|{{ 'a long sentence here' | truncate(9, true) }}|{{ 'short' | truncate(10) }}", "   abc   |a...|a long...|short");
    EXPECT_RENDER("{{ '%s-%s' | format('a', 'b') }} {{ 'abc' | reverse }} {{ u | reverse }}", "a-b cba x😀中é");
    EXPECT_RENDER("{{ '<p>' | forceescape }} {{ 'x' | safe | e }}", "&lt;p&gt; x");
    EXPECT_RENDER("{{ l | truncate(5) }} {{ zz | truncate(5) }}| {{ ('ab' | safe) | list }} {{ ('<a>' | safe)[1] }} {{ ('<a>' | safe)[1] is escaped }}", "[3, 1, 2] | ['a', 'b'] a True");
}

TEST(JinjaLanguage, FiltersNumbers) {
    EXPECT_RENDER("{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '0x1F' | int(0, 16) }} {{ ' 12 ' | int }} {{ none | int }}", "42 4 0 7 3 31 12 0");
    EXPECT_RENDER("{{ '1.5' | float }} {{ 'x' | float }} {{ 2 | float }} {{ '1e3' | float }}", "1.5 0.0 2.0 1000.0");
    EXPECT_RENDER("{{ -3 | abs }} {{ -2.5 | abs }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 3.14159 | round(2, 'floor') }} {{ 3.1 | round(0, 'ceil') }} {{ 7 | round }}", "3 2.5 2.0 4.0 2.67 3.14 4.0 7");
    EXPECT_RENDER("{{ l | sum }} {{ l | min }} {{ l | max }} {{ [1.5, 2] | sum }} {{ e | sum }} {{ ['b', 'A', 'c'] | max }} {{ ['b', 'A', 'c'] | min }}", "6 1 3 3.5 0 c A");
    EXPECT_RENDER("{{ messages | map(attribute='content') | join(',') }} {{ [{'p': 3}, {'p': 1}] | sum(attribute='p') }}", "Be brief.,Hi,Hello 4");
}

TEST(JinjaLanguage, FiltersSeq) {
    EXPECT_RENDER("{{ l | first }} {{ l | last }} {{ e | first }}|{{ 'abc' | first }} {{ l | length }} {{ d | length }} {{ l | count }}", "3 2 |a 3 3 3");
    EXPECT_RENDER("{{ l | sort }} {{ l | sort(reverse=true) }} {{ ['b', 'A', 'c'] | sort }} {{ ['b', 'A', 'c'] | sort(case_sensitive=true) }}", "[1, 2, 3] [3, 2, 1] ['A', 'b', 'c'] ['A', 'b', 'c']");
    EXPECT_RENDER("{{ [{'n': 2}, {'n': 1}] | sort(attribute='n') }} {{ messages | sort(attribute='role') | map(attribute='role') | list }}", "[{'n': 1}, {'n': 2}] ['assistant', 'system', 'user']");
    EXPECT_RENDER("{{ ['b', 'a'] | sort(attribute='zz') }} {{ [{'a': 2, 'b': 1}, {'a': 1, 'b': 2}, {'a': 1, 'b': 1}] | sort(attribute='a,b') }} {{ (l | map(attribute='zz') | list | sort) | length }}", "['b', 'a'] [{'a': 1, 'b': 1}, {'a': 1, 'b': 2}, {'a': 2, 'b': 1}] 3");
    EXPECT_RENDER("{{ n | select | list }} {{ n | map('upper') | list }} {{ zz | rejectattr('x') | list }}", "[] [] []");
    EXPECT_RENDER("{{ l | join }} {{ l | join('-') }} {{ messages | join(', ', attribute='role') }}", "312 3-1-2 system, user, assistant");
    EXPECT_RENDER("{{ ['a', 'b'] | map('upper') | list }} {{ messages | map(attribute='role') | list }} {{ messages | map(attribute='zz', default='-') | list }}", "['A', 'B'] ['system', 'user', 'assistant'] ['-', '-', '-']");
    EXPECT_RENDER("{{ l | select('odd') | list }} {{ l | reject('odd') | list }} {{ [0, 1, '', 'a'] | select | list }} {{ l | select('gt', 1) | list }}", "[3, 1] [2] [1, 'a'] [3, 2]");
    EXPECT_FAILS("{{ messages | selectattr('role', 'equalto', 'user') | list }} {{ messages | rejectattr('role', 'equalto', 'user') | map(attribute='role') | list }} {{ messages | selectattr('tool_calls') | length }}", type, "object of type 'generator' has no len()");
    EXPECT_RENDER("{{ messages | selectattr('role', 'in', ['user', 'system']) | map(attribute='role') | join }}", "systemuser");
    EXPECT_RENDER("{{ [1, 2, 1, 3, 2] | unique | list }} {{ ['a', 'A', 'b'] | unique | list }}", "[1, 2, 3] ['a', 'b']");
    EXPECT_RENDER("{{ l | reverse | list }} {{ range(7) | batch(3) | list }} {{ range(5) | batch(2, 'x') | list }} {{ range(7) | slice(3) | list }}", "[2, 1, 3] [[0, 1, 2], [3, 4, 5], [6]] [[0, 1], [2, 3], [4, 'x']] [[0, 1, 2], [3, 4], [5, 6]]");
    EXPECT_RENDER("{{ d | dictsort }} {{ {'b': 1, 'A': 2, 'c': 0} | dictsort }} {{ {'b': 1, 'a': 2} | dictsort(by='value') }} {{ {'b': 1, 'a': 2} | dictsort(reverse=true) }}", "[('a', [1, 2]), ('b', 1), ('s', \"x'y\")] [('A', 2), ('b', 1), ('c', 0)] [('b', 1), ('a', 2)] [('b', 1), ('a', 2)]");
    EXPECT_RENDER("{{ d | items | list }} {{ n | default('dflt') }} {{ zz | default('dflt') }} {{ '' | default('dflt') }} {{ '' | default('dflt', true) }} {{ zz | d('x') }}", "[('b', 1), ('a', [1, 2]), ('s', \"x'y\")] None dflt  dflt x");
    EXPECT_RENDER("{{ 'abc' | list }} {{ d | list }} {{ (1, 2) | list }}", "['a', 'b', 'c'] ['b', 'a', 's'] [1, 2]");
    EXPECT_RENDER("{% for k, v in d | items %}{{ k }}{% endfor %} {% for k, v in zz | items %}{{ k }}{% endfor %}", "bas ");
    EXPECT_RENDER("{{ l | map('string') | join('|') }} {{ [[1, 2], [3]] | map('length') | list }} {{ l | map('default', 0) | list }}", "3|1|2 [2, 1] [3, 1, 2]");
    EXPECT_RENDER("{{ d | attr('b') }}|{{ d | attr('items') is defined }}", "|True");
}

TEST(JinjaLanguage, Tojson) {
    EXPECT_RENDER("{{ tools | tojson }}", "[{\"name\": \"get_weather\", \"price\": 899.99, \"tags\": [\"a\", \"b\"], \"ok\": true, \"none\": null}]");
    EXPECT_RENDER("{{ tools | tojson(indent=2) }}", "[\n  {\n    \"name\": \"get_weather\",\n    \"price\": 899.99,\n    \"tags\": [\n      \"a\",\n      \"b\"\n    ],\n    \"ok\": true,\n    \"none\": null\n  }\n]");
    EXPECT_RENDER("{{ tools | tojson(indent=0) }}", "[\n{\n\"name\": \"get_weather\",\n\"price\": 899.99,\n\"tags\": [\n\"a\",\n\"b\"\n],\n\"ok\": true,\n\"none\": null\n}\n]");
    EXPECT_RENDER("{{ {'b': 1, 'a': [1, {}], 'c': []} | tojson(sort_keys=true) }}", "{\"a\": [1, {}], \"b\": 1, \"c\": []}");
    EXPECT_RENDER("{{ {'a': 1, 'b': 2} | tojson(separators=(',', ':')) }}", "{\"a\":1,\"b\":2}");
    EXPECT_RENDER("{{ u | tojson }} {{ u | tojson(ensure_ascii=true) }} {{ '\"\\\\\\n\\t\\x01' | tojson }}", "\"é中😀x\" \"\\u00e9\\u4e2d\\ud83d\\ude00x\" \"\\\"\\\\\\n\\t\\u0001\"");
    EXPECT_RENDER("{{ [1.0, 1e16, 0.1, -0.0, 1.5e-7, 12345678901234] | tojson }} {{ none | tojson }} {{ true | tojson }}", "[1.0, 1e+16, 0.1, -0.0, 1.5e-07, 12345678901234] null true");
    EXPECT_RENDER("{{ (1, 2) | tojson }} {{ 'x' | safe | tojson }} {{ {1: 'a', true: 'b', none: 'c'} | tojson }}", "[1, 2] \"x\" {\"1\": \"b\", \"null\": \"c\"}");
    EXPECT_RENDER("{{ {'a': [1, 2], 'b': {'c': 'd'}} | tojson(indent='\\t') }}", "{\n\t\"a\": [\n\t\t1,\n\t\t2\n\t],\n\t\"b\": {\n\t\t\"c\": \"d\"\n\t}\n}");
    EXPECT_RENDER("{{ {'a': 1} | tojson(indent=2, separators=(',', ' = ')) }}", "{\n  \"a\" = 1\n}");
}

TEST(JinjaLanguage, Tests) {
    EXPECT_RENDER("{{ zz is defined }} {{ d is defined }} {{ zz is undefined }} {{ n is none }} {{ d.b is none }}", "False True True True False");
    EXPECT_RENDER("{{ s is string }} {{ 1 is string }} {{ d is mapping }} {{ l is mapping }} {{ l is iterable }} {{ s is iterable }} {{ 1 is iterable }} {{ zz is iterable }}", "True False True False True True False True");
    EXPECT_RENDER("{{ l is sequence }} {{ s is sequence }} {{ d is sequence }} {{ 1 is sequence }} {{ (l | map('string')) is sequence }}", "True True True False False");
    EXPECT_RENDER("{{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ '1' is number }} {{ 1 is integer }} {{ true is integer }} {{ 1.0 is float }} {{ 1 is float }}", "True True True False True False True False");
    EXPECT_RENDER("{{ true is boolean }} {{ 1 is boolean }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ none is false }}", "True False True False True False False");
    EXPECT_RENDER("{{ 3 is odd }} {{ 3 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 'a' is equalto 'a' }} {{ 1 is eq 2 }} {{ 2 is gt 1 }} {{ 2 is lt 1 }} {{ 2 is ge 2 }} {{ 2 is le 1 }} {{ 2 is ne 1 }}", "True False True False True False True False True False True");
    EXPECT_RENDER("{{ 1 is in [1, 2] }} {{ 'x' is in 'abc' }} {{ none is sameas none }} {{ true is sameas true }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aB' is lower }}", "True False True True True True False");
    EXPECT_RENDER("{{ zz is callable }} {{ d.get is callable }} {{ 1 is callable }} {{ 'x' | safe is escaped }} {{ 'x' is escaped }} {{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }}", "True True False True False True False True");
    EXPECT_RENDER("{{ not zz is defined }} {{ zz is not defined }} {{ n is not none }}", "True True False");
}

TEST(JinjaLanguage, Methods) {
    EXPECT_RENDER("{{ '  x  '.strip() }}|{{ '  x  '.lstrip() }}|{{ '  x  '.rstrip() }}|{{ 'xxhixx'.strip('x') }}|{{ '\\n\\t x \\u3000'.strip() }}|", "x|x  |  x|hi|x|");
    EXPECT_RENDER("{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ '  a b  c  '.split(None, 1) }} {{ '  a b  c  '.rsplit(None, 1) }}", "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b,c'] ['a,b', 'c'] ['a', 'b  c  '] ['  a b', 'c']");
    EXPECT_RENDER("{{ 'a\\nb\\r\\nc'.splitlines() }} {{ 'a\\nb'.splitlines(true) }}", "['a', 'b', 'c'] ['a\\n', 'b']");
    EXPECT_RENDER("{{ s.startswith('He') }} {{ s.startswith(('x', 'Hel')) }} {{ s.endswith('ld') }} {{ s.startswith('World', 6) }}", "True True True True");
    EXPECT_RENDER("{{ s.upper() }} {{ s.lower() }} {{ 'hello world'.title() }} {{ \"they're\".title() }} {{ 'hELLO'.capitalize() }} {{ 'aB'.swapcase() }}", "HELLO WORLD hello world Hello World They'Re Hello Ab");
    EXPECT_RENDER("{{ s.replace('l', 'L') }} {{ s.replace('l', 'L', 2) }} {{ 'ab'.replace('', '-') }}", "HeLLo WorLd HeLLo World -a-b-");
    EXPECT_RENDER("{{ s.find('o') }} {{ s.rfind('o') }} {{ s.find('z') }} {{ u.find('x') }} {{ s.count('o') }} {{ s.index('W') }}", "4 7 -1 3 2 6");
    EXPECT_RENDER("{{ '-'.join(['a', 'b']) }} {{ ', '.join(l | map('string')) }} {{ '{} and {}'.format(1, 'b') }} {{ '{x}!{0:>4}'.format(7, x='y') }} {{ '{:.2f}'.format(3.14159) }}", "a-b 3, 1, 2 1 and b y!   7 3.14");
    EXPECT_RENDER("{{ '123'.isdigit() }} {{ 'ab'.isalpha() }} {{ 'a1'.isalnum() }} {{ '  '.isspace() }} {{ 'ab'.islower() }} {{ 'AB'.isupper() }}", "True True True True True True");
    EXPECT_RENDER("{{ '42'.zfill(5) }} {{ 'ab'.center(6, '*') }} {{ 'ab'.ljust(4, '.') }} {{ 'ab'.rjust(4) }} {{ 'a=b=c'.partition('=') }} {{ 'a=b=c'.rpartition('=') }}", "00042 **ab** ab..   ab ('a', '=', 'b=c') ('a=b', '=', 'c')");
    EXPECT_RENDER("{{ l.index(1) }} {{ l.count(3) }} {{ [1, 1].count(1) }}", "1 1 2");
    EXPECT_RENDER("{{ 'abc'.removeprefix('a') }} {{ 'abc'.removesuffix('c') }}", "bc ab");
    EXPECT_RENDER("{{ ('<x>' | safe).strip() + '<y>' }} {{ ('<x>' | safe).replace('x', '&') }}", "<x>&lt;y&gt; <&amp;>");
}

TEST(JinjaLanguage, Globals) {
    EXPECT_RENDER("{{ range(3) | list }} {{ range(2, 5) | list }} {{ range(10, 0, -3) | list }} {{ range(0) | list }}", "[0, 1, 2] [2, 3, 4] [10, 7, 4, 1] []");
    EXPECT_RENDER("{{ dict(a=1, b=2) }} {{ dict([('x', 1)]) }} {{ dict({'k': 1}, z=2) }}", "{'a': 1, 'b': 2} {'x': 1} {'k': 1, 'z': 2}");
    EXPECT_RENDER("{{ strftime_now('%Y-%m-%d %H:%M:%S') }} {{ strftime_now('%d %b %Y') }} {{ strftime_now('%B %d, %Y') }} {{ strftime_now('%A %a %j %y %I %p') }}", "2026-01-15 00:00:00 15 Jan 2026 January 15, 2026 Thursday Thu 015 26 12 AM");
    EXPECT_RENDER("{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}", "abab");
    EXPECT_RENDER("{% set j = joiner('|') %}{% for x in l %}{{ j() }}{{ x }}{% endfor %}", "3|1|2");
    EXPECT_RENDER("{{ namespace(a=1) }}", "<Namespace {'a': 1}>");
}

TEST(JinjaLanguage, Undefined) {
    EXPECT_RENDER("[{{ zz }}] [{{ zz | length }}] [{{ zz | list }}] [{{ zz ~ 'x' }}] [{{ zz | string }}] [{{ zz | trim }}] [{{ zz | join }}]", "[] [0] [[]] [x] [] [] []");
    EXPECT_RENDER("{% for x in zz %}x{% else %}none{% endfor %} {% if zz %}t{% else %}f{% endif %} {{ zz == zz }} {{ zz != 1 }} {{ 'a' in zz }}", "none f True True False");
    EXPECT_RENDER("{{ d.missing | default('dd') }} {{ [zz] }} {{ zz is mapping }} {{ zz is sequence }}", "dd [Undefined] False True");
    EXPECT_FAILS("{{ zz.attr }}", undefined, "'zz' is undefined");
    EXPECT_FAILS("{{ d.missing.attr }}", undefined, "'dict object' has no attribute 'missing'");
    EXPECT_FAILS("{{ l[9].x }}", undefined, "list object has no element 9");
    EXPECT_FAILS("{{ zz + 1 }}", undefined, "'zz' is undefined");
    EXPECT_FAILS("{{ 'a' + zz }}", undefined, "'zz' is undefined");
    EXPECT_FAILS("{{ zz() }}", undefined, "'zz' is undefined");
    EXPECT_FAILS("{{ zz['k'] }}", undefined, "'zz' is undefined");
    EXPECT_FAILS("{{ zz < 1 }}", undefined, "'zz' is undefined");
    EXPECT_FAILS("{{ zz | tojson }}", type, "Object of type Undefined is not JSON serializable");
    EXPECT_FAILS("{{ zz | int }}", undefined, "'zz' is undefined");
    EXPECT_FAILS("{{ -zz }}", undefined, "'zz' is undefined");
    EXPECT_RENDER("{{ 'x' if false }}|{{ ('x' if false) is defined }}", "|False");
    EXPECT_RENDER("{{ e | first }}|{{ e | last }}|{{ (e | first) is defined }}", "||False");
}

TEST(JinjaLanguage, TypeErrors) {
    EXPECT_FAILS("{{ 'a' + 1 }}", type, "can only concatenate str (not \"int\") to str");
    EXPECT_FAILS("{{ 'a' + [1] }}", type, "can only concatenate str (not \"list\") to str");
    EXPECT_FAILS("{{ 'a' + none }}", type, "can only concatenate str (not \"NoneType\") to str");
    EXPECT_FAILS("{{ 1 + 'a' }}", type, "unsupported operand type(s) for +: 'int' and 'str'");
    EXPECT_FAILS("{{ [1] + 'a' }}", type, "can only concatenate list (not \"str\") to list");
    EXPECT_FAILS("{{ none + 1 }}", type, "unsupported operand type(s) for +: 'NoneType' and 'int'");
    EXPECT_FAILS("{{ 'a' - 'b' }}", type, "unsupported operand type(s) for -: 'str' and 'str'");
    EXPECT_FAILS("{{ {} + {} }}", type, "unsupported operand type(s) for +: 'dict' and 'dict'");
    EXPECT_FAILS("{{ 1 / 0 }}", value, "division by zero");
    EXPECT_FAILS("{{ 1 // 0 }}", value, "integer division or modulo by zero");
    EXPECT_FAILS("{{ 1 % 0 }}", value, "integer modulo by zero");
    EXPECT_FAILS("{{ 'a' < 1 }}", type, "'<' not supported between instances of 'str' and 'int'");
    EXPECT_FAILS("{{ [1] < 'a' }}", type, "'<' not supported between instances of 'list' and 'str'");
    EXPECT_FAILS("{{ 1 in 'abc' }}", type, "'in <string>' requires string as left operand, not int");
    EXPECT_FAILS("{{ 'a' in none }}", type, "argument of type 'NoneType' is not iterable");
    EXPECT_FAILS("{{ 1 in 5 }}", type, "argument of type 'int' is not iterable");
    EXPECT_FAILS("{% for x in none %}{% endfor %}", type, "'NoneType' object is not iterable");
    EXPECT_FAILS("{% for x in 5 %}{% endfor %}", type, "'int' object is not iterable");
    EXPECT_FAILS("{{ 5 | length }}", type, "object of type 'int' has no len()");
    EXPECT_FAILS("{{ none | length }}", type, "object of type 'NoneType' has no len()");
    EXPECT_FAILS("{{ l | map('upper') | tojson }}", type, "Object of type generator is not JSON serializable");
    EXPECT_FAILS("{{ l | select | tojson }}", type, "Object of type generator is not JSON serializable");
    EXPECT_FAILS("{{ d.items() | tojson }}", type, "Object of type dict_items is not JSON serializable");
    EXPECT_FAILS("{{ 'x' | items | list }}", type, "Can only get item pairs from a mapping.");
    EXPECT_FAILS("{{ l.append(1) }}", sandbox, "access to attribute 'append' of 'list' object is unsafe.");
    EXPECT_FAILS("{{ l.pop() }}", sandbox, "access to attribute 'pop' of 'list' object is unsafe.");
    EXPECT_FAILS("{{ d.update({}) }}", sandbox, "access to attribute 'update' of 'dict' object is unsafe.");
    EXPECT_FAILS("{% set x = d.pop('b') %}", sandbox, "access to attribute 'pop' of 'dict' object is unsafe.");
    EXPECT_FAILS("{{ x | from_json }}", unknown_name, "No filter named 'from_json'");
    EXPECT_FAILS("{{ x is nosuchtest }}", unknown_name, "No test named 'nosuchtest'");
    EXPECT_FAILS("{{ 'a'() }}", type, "'str' object is not callable");
    EXPECT_FAILS("{% set a, b = [1, 2, 3] %}", value, "too many values to unpack (expected 2)");
    EXPECT_FAILS("{% set a, b = [1] %}", value, "not enough values to unpack (expected 2, got 1)");
    EXPECT_RENDER("{{ ['a', 1] | join }}", "a1");
    EXPECT_FAILS("{{ '-'.join(['a', 1]) }}", type, "sequence item 1: expected str instance, int found");
    EXPECT_FAILS("{{ ''.split('') }}", value, "empty separator");
    EXPECT_FAILS("{{ {[1]: 2} }}", type, "unhashable type: 'list'");
    EXPECT_FAILS("{{ 'x' * 'y' }}", type, "can't multiply sequence by non-int of type 'str'");
    EXPECT_FAILS("{{ raise_exception('Boom: ' ~ 1) }}", raised, "Boom: 1");
    EXPECT_FAILS("{% set x = 1 %}{% set x.y = 2 %}", type, "cannot assign attribute on non-namespace object");
    EXPECT_FAILS("{% macro m() %}{% endmacro %}{{ m(1) }}", type, "macro 'm' takes not more than 0 argument(s)");
    EXPECT_FAILS("{% macro m() %}{% endmacro %}{{ m(k=1) }}", type, "macro 'm' takes no keyword argument 'k'");
    EXPECT_FAILS("{{ range(1, 2, 0) }}", value, "range() arg 3 must not be zero");
    EXPECT_FAILS("{{ 'a' | int('x', 'y', 'z') }}", type, "takes at most");
    EXPECT_FAILS("{{ (l | map('string')) | length }}", type, "object of type 'generator' has no len()");
    EXPECT_FAILS("{{ (l | map('string')) | last }}", type, "'generator' object is not reversible");
    EXPECT_FAILS("{{ l | sum(attribute='x') }}", undefined, "'int object' has no attribute 'x'");
    EXPECT_FAILS("{{ 5 | reverse }}", value, "argument must be iterable");
    EXPECT_FAILS("{{ l | indent }}", type, "'list' object has no attribute 'splitlines'");
    EXPECT_FAILS("{{ [1, 2, 3, 4, 5] | truncate(3, leeway=0) }}", type, "'list' object has no attribute 'rsplit'");
    EXPECT_FAILS("{{ 5 | truncate }}", type, "object of type 'int' has no len()");
    EXPECT_FAILS("{{ i[1:] }}", type, "'int' object is not subscriptable");
    EXPECT_FAILS("{{ d[1:] }}", type, "unhashable type: 'slice'");
    EXPECT_FAILS("{{ zz[1:] }}", undefined, "'zz' is undefined");
    EXPECT_FAILS("{{ zz | dictsort }}", undefined, "'zz' is undefined");
    EXPECT_RENDER("{{ zz | items | list }}|", "[]|");
}

TEST(JinjaLanguage, Repr) {
    EXPECT_RENDER("{{ [1.5, -0.0, 1e100, none, true, 'a'] }} {{ {'k': ('t',)} }} {{ [{'a': \"it's\"}] }}", "[1.5, -0.0, 1e+100, None, True, 'a'] {'k': ('t',)} [{'a': \"it's\"}]");
    EXPECT_RENDER("{{ messages[0] }}", "{'role': 'system', 'content': 'Be brief.'}");
    EXPECT_RENDER("{{ ['x' | safe] }} {{ [zz] }}", "[Markup('x')] [Undefined]");
    EXPECT_RENDER("{{ d.values() }}", "dict_values([1, [1, 2], \"x'y\"])");
    EXPECT_RENDER("{{ [1, 2] ~ (3,) }}", "[1, 2](3,)");
    EXPECT_RENDER("{{ ['\\u200b', '\\xa0', '\\x7f', 'a\\u2028b'] }}", "['\\u200b', '\\xa0', '\\x7f', 'a\\u2028b']");
}

