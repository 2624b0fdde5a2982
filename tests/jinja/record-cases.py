#!/usr/bin/env python3
# Records the expectations of tests/jinja/test-jinja-language.cpp from python jinja2 (3.1) set up
# as the reference of ../shared/testdata/chat: ImmutableSandboxedEnvironment(trim_blocks=True,
# lstrip_blocks=True) with loopcontrols, the {% generation %} tag, transformers' tojson,
# raise_exception and a fixed strftime_now. Prints the TEST bodies; paste them after the helpers.
#   python3 tests/jinja/record-cases.py > /tmp/cases.txt
import datetime
import json

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class AssistantTracker(Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_gen", []), [], [], body).set_lineno(lineno)

    def _gen(self, caller):
        return caller()


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(msg):
    raise jinja2.exceptions.TemplateError(msg)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                    extensions=[AssistantTracker, jinja2.ext.loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = lambda fmt: datetime.datetime(2026, 1, 15, 0, 0, 0).strftime(fmt)

# the context of every case (context() in the test)
CTX = json.loads(r'''{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}], "d": {"b": 1, "a": [1, 2], "s": "x'y"}, "n": null, "t": true, "fl": 1.5, "i": 7, "s": "Hello World", "u": "é中😀x", "l": [3, 1, 2], "e": [], "nested": {"x": {"y": {"z": 1}}}, "big": 12345678901234, "tools": [{"name": "get_weather", "price": 899.99, "tags": ["a", "b"], "ok": true, "none": null}]}''')

KINDS = {"UndefinedError": "undefined", "TypeError": "type", "ValueError": "value", "ZeroDivisionError": "value",
         "SecurityError": "sandbox", "TemplateAssertionError": "unknown_name", "TemplateError": "raised",
         "TemplateRuntimeError": "type", "TemplateSyntaxError": "syntax", "FilterArgumentError": "value",
         "AttributeError": "type", "AssertionError": "value"}


def cpp(s):
    out = '"'
    for ch in s:
        if ch == '"':
            out += '\\"'
        elif ch == "\\":
            out += "\\\\"
        elif ch == "\n":
            out += "\\n"
        elif ch == "\t":
            out += "\\t"
        elif ch == "\r":
            out += "\\r"
        elif ord(ch) < 0x20:
            out += '\\x%02x""' % ord(ch)
        else:
            out += ch
    return out + '"'


def emit(items):
    for tmpl in items:
        try:
            print(f"    EXPECT_RENDER({cpp(tmpl)}, {cpp(env.from_string(tmpl).render(**CTX))});")
        except Exception as e:  # the engine must fail the same way
            msg = str(e)
            if type(e).__name__ == "TemplateAssertionError":
                msg = msg.rstrip(".")  # python reports these at compile time, the engine when reached
            if "positional arguments but" in msg:
                msg = "takes at most"
            print(f"    EXPECT_FAILS({cpp(tmpl)}, {KINDS[type(e).__name__]}, {cpp(msg)});")


groups = {}
groups['whitespace'] = [
    "a\n{% if t %}\nb\n{% endif %}\nc",
    "a\n    {% if t %}\n    b\n    {% endif %}\nc",
    "a  {%- if t -%}  b  {%- endif -%}  c",
    "a {{- s -}} b",
    "a\n  {{ s }}\n",
    "x  {%+ if t %}y{% endif %}",
    "{% if t +%}\nkeep\n{% endif %}",
    "a\n{# comment #}\nb",
    "a\n  {#- c -#}\n  b",
    "line1\r\nline2\r\n",
    "trailing\n\n",
    "{% for x in l %}\n  {{ x }}\n{% endfor %}\n",
    "{% raw %}{{ not }}{% endraw %}",
    "a\n  {% raw %}\n{{ x }}\n  {% endraw %}\nb",
    "{{ '}}' }}",
    "{{ {'a': {'b': 1}} }}",
    "  {% set x = 1 %}\n  {{ x }}",
    "{% if t %}   \n{% endif %}x",
]
groups['literals'] = [
    "{{ 'a\\tb\\n' }}|{{ \"q\\\"\" }}|{{ 'it\\'s' }}",
    "{{ '\\x41\\u00e9\\U0001F600\\101' }}",
    "{{ 'a' 'b' \"c\" }}",
    "{{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1.5e3 }} {{ 2.0 }} {{ 1e-5 }} {{ 0.25 }}",
    "{{ [1, 'a', none, true, 1.0] }}",
    "{{ (1,) }} {{ (1, 2) }} {{ () }}",
    "{{ {'a': 1, 'b': [True, False]} }}",
    "{{ True }} {{ false }} {{ None }} {{ none }}",
    "{{ 'x' ~ none ~ 1 ~ [1] ~ {'k': 'v'} }}",
    "{{ \"it's\" }} {{ [\"it's\", 'say \"hi\"', 'both \\' \"'] }}",
    "{{ ['\\n\\t\\\\', '\\x00', 'é中😀'] }}",
    "{{ 1e16 }} {{ 123456789.0 }} {{ 0.1 + 0.2 }} {{ 1/3 }} {{ 10/2 }} {{ -0.0 }} {{ 1e22 }} {{ 1.5e-7 }}",
]
groups['operators'] = [
    "{{ 7 + 3 }} {{ 7 - 10 }} {{ 7 * 3 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}",
    "{{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 1 + true }}",
    "{{ 1.0 // 0.1 }} {{ 1.0 % 0.1 }} {{ -1 // 0.3 }} {{ 2.5 is odd }} {{ 2.5 is even }} {{ 3.0 is odd }} {{ 'x' % zz }} {{ 'abc' % [1] }}",
    "{{ 'ab' * 3 }} {{ 3 * 'ab' }} {{ [1] * 3 }} {{ 'ab' * 0 }}",
    "{{ 'a' + 'b' }} {{ [1] + [2, 3] }} {{ (1,) + (2,) }}",
    "{{ 1 == 1.0 }} {{ 1 != 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 2 <= 2 }} {{ 3 > 2 > 1 }} {{ 1 < 3 > 2 }}",
    "{{ 'a' in 'cat' }} {{ 1 in [1, 2] }} {{ 'b' in {'b': 1} }} {{ 3 not in l }} {{ 'x' in e }}",
    "{{ t and 'yes' }} {{ n or 'fallback' }} {{ not t }} {{ not n and 1 }} {{ 0 or '' or [] }}",
    "{{ 'a' if t else 'b' }} {{ 'a' if n else 'b' }} {{ 'a' if n }}|",
    "{{ 'x' if t if t else 'z' }}",
    "{{ -i }} {{ +fl }} {{ -(1 + 2) }} {{ (1 + 2) * 3 }}",
    "{{ 'a' ~ 1 + 2 }} {{ 1 + 2 ~ 'b' }}",
    "{{ '%s is %d years, %.2f%%' % ('Bob', 42, 3.14159) }} {{ '%(a)s-%(b)s' % {'a': 1, 'b': 2} }} {{ '%5s|%-5s|%05d' % ('a', 'b', 42) }}",
    "{{ '%s' % [1, 2] }} {{ '%r' % 'x' }} {{ '%x %X %o' % (255, 255, 8) }}",
    "{{ 'ab' == 'ab' }} {{ [1, 2] == [1, 2] }} {{ {'a': 1, 'b': 2} == {'b': 2, 'a': 1} }} {{ (1, 2) == [1, 2] }} {{ none == none }}",
]
groups['access'] = [
    "{{ d.b }} {{ d['b'] }} {{ d.a[1] }} {{ d.a.0 }} {{ nested.x.y.z }} {{ nested['x']['y'] }}",
    "{{ l[0] }} {{ l[-1] }} {{ l[5] }}|{{ s[0] }} {{ s[-1] }} {{ u[1] }} {{ u[-2] }}",
    "{{ l[1:] }} {{ l[:2] }} {{ l[::-1] }} {{ l[::2] }} {{ l[-2:] }} {{ l[5:] }} {{ l[1:-1] }}",
    "{{ s[:5] }} {{ s[::-1] }} {{ u[::-1] }} {{ u[1:3] }} {{ s[-5:] }} {{ s[10:2:-3] }}",
    "{{ d.missing }}|{{ d.missing is defined }}|{{ d['missing'] is undefined }}",
    "{{ messages[0].role }} {{ messages[-1]['tool_calls'][0].function.name }}",
    "{{ d.get('b') }} {{ d.get('zz') }} {{ d.get('zz', 5) }} {{ d.keys() | list }} {{ d.values() | list }} {{ d.items() | list }}",
    "{{ d.items() }} {{ d.keys() }}",
    "{{ (1, 2)[0] }} {{ [[1, 2], [3]][0][1] }}",
]
groups['statements'] = [
    "{% if n %}a{% elif i > 5 %}b{% else %}c{% endif %}",
    "{% if e %}a{% elif n %}b{% else %}c{% endif %}",
    "{% for x in l %}{{ x }}{% else %}empty{% endfor %}|{% for x in e %}{{ x }}{% else %}empty{% endfor %}",
    "{% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }},{% endfor %}",
    "{% for x in l %}{{ loop.previtem }}-{{ x }}-{{ loop.nextitem }};{% endfor %}",
    "{% for x in l %}{{ loop.cycle('a', 'b') }}{% endfor %}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
    "{% for k in d %}{{ k }}{% endfor %} {% for c in 'abc' %}{{ c }}.{% endfor %}",
    "{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}",
    "{% for (a, b), c in [([1, 2], 3)] %}{{ a }}{{ b }}{{ c }}{% endfor %}",
    "{% for x in l if x > 1 %}{{ x }}:{{ loop.index }}/{{ loop.length }} {% endfor %}",
    "{% for x in l %}{% if x == 1 %}{% break %}{% endif %}{{ x }}{% endfor %}",
    "{% for x in l %}{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}",
    "{% for x in [1, 2] %}{% for y in [3, 4] %}{{ loop.index }}{{ x }}{{ y }} {% endfor %}{{ loop.index }}|{% endfor %}",
    "{% set x = 1 %}{% for i in range(3) %}{{ x }}{% set x = x + 1 %}{{ x }},{% endfor %}{{ x }}",
    "{% set ns = namespace(c=0, items=[]) %}{% for i in range(3) %}{% set ns.c = ns.c + i %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.c }} {{ ns.items }}",
    "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns.zz is defined }}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c, d = 'xy' %}{{ c }}{{ d }}",
    "{% set x %}  block {{ i }}  {% endset %}[{{ x }}]",
    "{% set x | trim | upper %}  block  {% endset %}[{{ x }}]",
    "{% filter upper %}hello {{ s }}{% endfilter %}",
    "{% filter trim %}   padded   {% endfilter %}|",
    "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a is defined }}",
    "{% generation %}gen {{ i }}{% endgeneration %}",
    "{% for i in range(3) %}{{ i }}{% endfor %} {% for i in range(1, 7, 2) %}{{ i }}{% endfor %} {% for i in range(3, 0, -1) %}{{ i }}{% endfor %}",
    "{% print 'printed' %}",
    "{% block b %}in block{% endblock %}",
    "{% if t %}{% set inner = 5 %}{% endif %}{{ inner }}",
    "{% for x in [1] %}{% set leaked = 1 %}{% endfor %}{{ leaked is defined }}",
    "{% for x in l recursive %}{{ x }}{% endfor %}",
    "{% for item in [[1, [2, 3]], 4] recursive %}[{% if item is iterable %}{{ loop(item) }}{% else %}{{ item }}@{{ loop.depth }}{% endif %}]{% endfor %}",
    "{% for x in [1, 1, 2] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}",
    "{% generation %}{% set g1 = 1 %}{{ g1 }}{% endgeneration %}{{ g1 is defined }}",
    "{% filter upper %}{% set f1 = 1 %}{% endfilter %}{{ f1 is defined }} {% set b1 %}{% set f2 = 1 %}{% endset %}{{ f2 is defined }}",
    "{% with %}{% set w1 = 1 %}{% endwith %}{{ w1 is defined }}",
    "{{ 1, 2 }}",
]
groups['macros'] = [
    "{% macro m(a, b=2, c='x') %}{{ a }}-{{ b }}-{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ m(1, c='y') }} {{ m(a=5, b=6) }}",
    "{% macro m(a) %}[{{ a }}]{% endmacro %}{{ m() }}|{{ m('x') ~ 'y' }}",
    "{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k=3) }}",
    "{% macro outer() %}<{{ caller() }}>{% endmacro %}{% call outer() %}inside {{ i }}{% endcall %}",
    "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) each([1, 2]) %}({{ v }}){% endcall %}",
    "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}",
    "{% macro m() %}{{ y }}{% endmacro %}{% set y = 1 %}{{ m() }}{% set y = 2 %}{{ m() }}",
    "{% macro m(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m('hi') }}",
    "{% macro m() %}{% set local = 1 %}{{ local }}{% endmacro %}{{ m() }}{{ local is defined }}",
    "{% macro m() %}x{% endmacro %}{{ m }}",
    "{% macro m(p, s=s) %}[{{ s }}]{% endmacro %}{{ m(1) }}",
]
groups['filters_string'] = [
    "{{ '  a b  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ s | upper }} {{ s | lower }} {{ 'hello world' | capitalize }} {{ \"hello world's-end (x)\" | title }}",
    "{{ s | replace('o', '0') }} {{ s | replace('o', '0', 1) }} {{ s | length }} {{ u | length }} {{ s | wordcount }} {{ 'one two  three' | wordcount }}",
    "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'x\\ny' | indent('> ') }}",
    "{{ 1 | string }} {{ [1, 'a'] | string }} {{ none | string }} {{ 'x' | string }}",
    "{{ '<a&b>' | e }} {{ '<a>' | escape }} {{ ('<a>' | safe) ~ '<b>' }} {{ '<a>' | safe + '<b>' }} {{ '<b>' + '<a>' | safe }}",
    "{{ 'abc' | center(9) }}|{{ 'a long sentence here' | truncate(9) }}|{{ 'a long sentence here' | truncate(9, true) }}|{{ 'short' | truncate(10) }}",
    "{{ '%s-%s' | format('a', 'b') }} {{ 'abc' | reverse }} {{ u | reverse }}",
    "{{ '<p>' | forceescape }} {{ 'x' | safe | e }}",
    "{{ l | truncate(5) }} {{ zz | truncate(5) }}| {{ ('ab' | safe) | list }} {{ ('<a>' | safe)[1] }} {{ ('<a>' | safe)[1] is escaped }}",
]
groups['filters_numbers'] = [
    "{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '0x1F' | int(0, 16) }} {{ ' 12 ' | int }} {{ none | int }}",
    "{{ '1.5' | float }} {{ 'x' | float }} {{ 2 | float }} {{ '1e3' | float }}",
    "{{ -3 | abs }} {{ -2.5 | abs }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 3.14159 | round(2, 'floor') }} {{ 3.1 | round(0, 'ceil') }} {{ 7 | round }}",
    "{{ l | sum }} {{ l | min }} {{ l | max }} {{ [1.5, 2] | sum }} {{ e | sum }} {{ ['b', 'A', 'c'] | max }} {{ ['b', 'A', 'c'] | min }}",
    "{{ messages | map(attribute='content') | join(',') }} {{ [{'p': 3}, {'p': 1}] | sum(attribute='p') }}",
]
groups['filters_seq'] = [
    "{{ l | first }} {{ l | last }} {{ e | first }}|{{ 'abc' | first }} {{ l | length }} {{ d | length }} {{ l | count }}",
    "{{ l | sort }} {{ l | sort(reverse=true) }} {{ ['b', 'A', 'c'] | sort }} {{ ['b', 'A', 'c'] | sort(case_sensitive=true) }}",
    "{{ [{'n': 2}, {'n': 1}] | sort(attribute='n') }} {{ messages | sort(attribute='role') | map(attribute='role') | list }}",
    "{{ ['b', 'a'] | sort(attribute='zz') }} {{ [{'a': 2, 'b': 1}, {'a': 1, 'b': 2}, {'a': 1, 'b': 1}] | sort(attribute='a,b') }} {{ (l | map(attribute='zz') | list | sort) | length }}",
    "{{ n | select | list }} {{ n | map('upper') | list }} {{ zz | rejectattr('x') | list }}",
    "{{ l | join }} {{ l | join('-') }} {{ messages | join(', ', attribute='role') }}",
    "{{ ['a', 'b'] | map('upper') | list }} {{ messages | map(attribute='role') | list }} {{ messages | map(attribute='zz', default='-') | list }}",
    "{{ l | select('odd') | list }} {{ l | reject('odd') | list }} {{ [0, 1, '', 'a'] | select | list }} {{ l | select('gt', 1) | list }}",
    "{{ messages | selectattr('role', 'equalto', 'user') | list }} {{ messages | rejectattr('role', 'equalto', 'user') | map(attribute='role') | list }} {{ messages | selectattr('tool_calls') | length }}",
    "{{ messages | selectattr('role', 'in', ['user', 'system']) | map(attribute='role') | join }}",
    "{{ [1, 2, 1, 3, 2] | unique | list }} {{ ['a', 'A', 'b'] | unique | list }}",
    "{{ l | reverse | list }} {{ range(7) | batch(3) | list }} {{ range(5) | batch(2, 'x') | list }} {{ range(7) | slice(3) | list }}",
    "{{ d | dictsort }} {{ {'b': 1, 'A': 2, 'c': 0} | dictsort }} {{ {'b': 1, 'a': 2} | dictsort(by='value') }} {{ {'b': 1, 'a': 2} | dictsort(reverse=true) }}",
    "{{ d | items | list }} {{ n | default('dflt') }} {{ zz | default('dflt') }} {{ '' | default('dflt') }} {{ '' | default('dflt', true) }} {{ zz | d('x') }}",
    "{{ 'abc' | list }} {{ d | list }} {{ (1, 2) | list }}",
    "{% for k, v in d | items %}{{ k }}{% endfor %} {% for k, v in zz | items %}{{ k }}{% endfor %}",
    "{{ l | map('string') | join('|') }} {{ [[1, 2], [3]] | map('length') | list }} {{ l | map('default', 0) | list }}",
    "{{ d | attr('b') }}|{{ d | attr('items') is defined }}",
]
groups['tojson'] = [
    "{{ tools | tojson }}",
    "{{ tools | tojson(indent=2) }}",
    "{{ tools | tojson(indent=0) }}",
    "{{ {'b': 1, 'a': [1, {}], 'c': []} | tojson(sort_keys=true) }}",
    "{{ {'a': 1, 'b': 2} | tojson(separators=(',', ':')) }}",
    "{{ u | tojson }} {{ u | tojson(ensure_ascii=true) }} {{ '\"\\\\\\n\\t\\x01' | tojson }}",
    "{{ [1.0, 1e16, 0.1, -0.0, 1.5e-7, 12345678901234] | tojson }} {{ none | tojson }} {{ true | tojson }}",
    "{{ (1, 2) | tojson }} {{ 'x' | safe | tojson }} {{ {1: 'a', true: 'b', none: 'c'} | tojson }}",
    "{{ {'a': [1, 2], 'b': {'c': 'd'}} | tojson(indent='\\t') }}",
    "{{ {'a': 1} | tojson(indent=2, separators=(',', ' = ')) }}",
]
groups['tests'] = [
    "{{ zz is defined }} {{ d is defined }} {{ zz is undefined }} {{ n is none }} {{ d.b is none }}",
    "{{ s is string }} {{ 1 is string }} {{ d is mapping }} {{ l is mapping }} {{ l is iterable }} {{ s is iterable }} {{ 1 is iterable }} {{ zz is iterable }}",
    "{{ l is sequence }} {{ s is sequence }} {{ d is sequence }} {{ 1 is sequence }} {{ (l | map('string')) is sequence }}",
    "{{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ '1' is number }} {{ 1 is integer }} {{ true is integer }} {{ 1.0 is float }} {{ 1 is float }}",
    "{{ true is boolean }} {{ 1 is boolean }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ none is false }}",
    "{{ 3 is odd }} {{ 3 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 'a' is equalto 'a' }} {{ 1 is eq 2 }} {{ 2 is gt 1 }} {{ 2 is lt 1 }} {{ 2 is ge 2 }} {{ 2 is le 1 }} {{ 2 is ne 1 }}",
    "{{ 1 is in [1, 2] }} {{ 'x' is in 'abc' }} {{ none is sameas none }} {{ true is sameas true }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aB' is lower }}",
    "{{ zz is callable }} {{ d.get is callable }} {{ 1 is callable }} {{ 'x' | safe is escaped }} {{ 'x' is escaped }} {{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }}",
    "{{ not zz is defined }} {{ zz is not defined }} {{ n is not none }}",
]
groups['methods'] = [
    "{{ '  x  '.strip() }}|{{ '  x  '.lstrip() }}|{{ '  x  '.rstrip() }}|{{ 'xxhixx'.strip('x') }}|{{ '\\n\\t x \\u3000'.strip() }}|",
    "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ '  a b  c  '.split(None, 1) }} {{ '  a b  c  '.rsplit(None, 1) }}",
    "{{ 'a\\nb\\r\\nc'.splitlines() }} {{ 'a\\nb'.splitlines(true) }}",
    "{{ s.startswith('He') }} {{ s.startswith(('x', 'Hel')) }} {{ s.endswith('ld') }} {{ s.startswith('World', 6) }}",
    "{{ s.upper() }} {{ s.lower() }} {{ 'hello world'.title() }} {{ \"they're\".title() }} {{ 'hELLO'.capitalize() }} {{ 'aB'.swapcase() }}",
    "{{ s.replace('l', 'L') }} {{ s.replace('l', 'L', 2) }} {{ 'ab'.replace('', '-') }}",
    "{{ s.find('o') }} {{ s.rfind('o') }} {{ s.find('z') }} {{ u.find('x') }} {{ s.count('o') }} {{ s.index('W') }}",
    "{{ '-'.join(['a', 'b']) }} {{ ', '.join(l | map('string')) }} {{ '{} and {}'.format(1, 'b') }} {{ '{x}!{0:>4}'.format(7, x='y') }} {{ '{:.2f}'.format(3.14159) }}",
    "{{ '123'.isdigit() }} {{ 'ab'.isalpha() }} {{ 'a1'.isalnum() }} {{ '  '.isspace() }} {{ 'ab'.islower() }} {{ 'AB'.isupper() }}",
    "{{ '42'.zfill(5) }} {{ 'ab'.center(6, '*') }} {{ 'ab'.ljust(4, '.') }} {{ 'ab'.rjust(4) }} {{ 'a=b=c'.partition('=') }} {{ 'a=b=c'.rpartition('=') }}",
    "{{ l.index(1) }} {{ l.count(3) }} {{ [1, 1].count(1) }}",
    "{{ 'abc'.removeprefix('a') }} {{ 'abc'.removesuffix('c') }}",
    "{{ ('<x>' | safe).strip() + '<y>' }} {{ ('<x>' | safe).replace('x', '&') }}",
]
groups['globals'] = [
    "{{ range(3) | list }} {{ range(2, 5) | list }} {{ range(10, 0, -3) | list }} {{ range(0) | list }}",
    "{{ dict(a=1, b=2) }} {{ dict([('x', 1)]) }} {{ dict({'k': 1}, z=2) }}",
    "{{ strftime_now('%Y-%m-%d %H:%M:%S') }} {{ strftime_now('%d %b %Y') }} {{ strftime_now('%B %d, %Y') }} {{ strftime_now('%A %a %j %y %I %p') }}",
    "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}",
    "{% set j = joiner('|') %}{% for x in l %}{{ j() }}{{ x }}{% endfor %}",
    "{{ namespace(a=1) }}",
]
groups['undefined'] = [
    "[{{ zz }}] [{{ zz | length }}] [{{ zz | list }}] [{{ zz ~ 'x' }}] [{{ zz | string }}] [{{ zz | trim }}] [{{ zz | join }}]",
    "{% for x in zz %}x{% else %}none{% endfor %} {% if zz %}t{% else %}f{% endif %} {{ zz == zz }} {{ zz != 1 }} {{ 'a' in zz }}",
    "{{ d.missing | default('dd') }} {{ [zz] }} {{ zz is mapping }} {{ zz is sequence }}",
    "{{ zz.attr }}",
    "{{ d.missing.attr }}",
    "{{ l[9].x }}",
    "{{ zz + 1 }}",
    "{{ 'a' + zz }}",
    "{{ zz() }}",
    "{{ zz['k'] }}",
    "{{ zz < 1 }}",
    "{{ zz | tojson }}",
    "{{ zz | int }}",
    "{{ -zz }}",
    "{{ 'x' if false }}|{{ ('x' if false) is defined }}",
    "{{ e | first }}|{{ e | last }}|{{ (e | first) is defined }}",
]
groups['type_errors'] = [
    "{{ 'a' + 1 }}", "{{ 'a' + [1] }}", "{{ 'a' + none }}", "{{ 1 + 'a' }}", "{{ [1] + 'a' }}", "{{ none + 1 }}",
    "{{ 'a' - 'b' }}", "{{ {} + {} }}", "{{ 1 / 0 }}", "{{ 1 // 0 }}", "{{ 1 % 0 }}", "{{ 'a' < 1 }}", "{{ [1] < 'a' }}",
    "{{ 1 in 'abc' }}", "{{ 'a' in none }}", "{{ 1 in 5 }}", "{% for x in none %}{% endfor %}", "{% for x in 5 %}{% endfor %}",
    "{{ 5 | length }}", "{{ none | length }}", "{{ l | map('upper') | tojson }}", "{{ l | select | tojson }}",
    "{{ d.items() | tojson }}", "{{ 'x' | items | list }}", "{{ l.append(1) }}", "{{ l.pop() }}", "{{ d.update({}) }}", "{% set x = d.pop('b') %}",
    "{{ x | from_json }}", "{{ x is nosuchtest }}", "{{ 'a'() }}", "{% set a, b = [1, 2, 3] %}", "{% set a, b = [1] %}",
    "{{ ['a', 1] | join }}", "{{ '-'.join(['a', 1]) }}", "{{ ''.split('') }}", "{{ {[1]: 2} }}", "{{ 'x' * 'y' }}",
    "{{ raise_exception('Boom: ' ~ 1) }}", "{% set x = 1 %}{% set x.y = 2 %}", "{% macro m() %}{% endmacro %}{{ m(1) }}",
    "{% macro m() %}{% endmacro %}{{ m(k=1) }}", "{{ range(1, 2, 0) }}", "{{ 'a' | int('x', 'y', 'z') }}",
    "{{ (l | map('string')) | length }}", "{{ (l | map('string')) | last }}", "{{ l | sum(attribute='x') }}",
    "{{ 5 | reverse }}", "{{ l | indent }}", "{{ [1, 2, 3, 4, 5] | truncate(3, leeway=0) }}", "{{ 5 | truncate }}", "{{ i[1:] }}", "{{ d[1:] }}", "{{ zz[1:] }}",
    "{{ zz | dictsort }}", "{{ zz | items | list }}|",
]
groups['repr'] = [
    "{{ [1.5, -0.0, 1e100, none, true, 'a'] }} {{ {'k': ('t',)} }} {{ [{'a': \"it's\"}] }}",
    "{{ messages[0] }}",
    "{{ ['x' | safe] }} {{ [zz] }}",
    "{{ d.values() }}",
    "{{ [1, 2] ~ (3,) }}",
    "{{ ['\\u200b', '\\xa0', '\\x7f', 'a\\u2028b'] }}",
]


for group, items in groups.items():
    print(f"TEST(JinjaLanguage, {group.title().replace('_', '')}) {{")
    emit(items)
    print("}\n")
