// Tests of the chat page's Markdown parser (webui/markdown.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const { parseMarkdown, parseInline, isSafeUrl } = await import(new URL('../../webui/markdown.js', import.meta.url));

const ALLOWED_TYPES = new Set([
  'root', 'paragraph', 'heading', 'code', 'list', 'item', 'blockquote', 'hr',
  'text', 'strong', 'em', 'inlineCode', 'link', 'break',
]);

function walk(node, visit) {
  visit(node);
  for (const c of node.children || []) walk(c, visit);
  for (const c of node.items || []) walk(c, visit);
}

function blocks(text) {
  return parseMarkdown(text).children;
}

// Concatenated text of all text-like nodes, in order.
function textOf(node) {
  let out = '';
  walk(node, (n) => {
    if (n.type === 'text' || n.type === 'inlineCode') out += n.value;
    else if (n.type === 'code') out += n.text;
    else if (n.type === 'break') out += '\n';
  });
  return out;
}

test('headings of levels 1 to 6, closing hashes dropped', () => {
  const b = blocks('# One\n## Two ##\n###### Six\n####### seven\n#nospace');
  assert.deepEqual(b.slice(0, 3).map((n) => [n.type, n.level, textOf(n)]), [
    ['heading', 1, 'One'], ['heading', 2, 'Two'], ['heading', 6, 'Six'],
  ]);
  assert.equal(b[3].type, 'paragraph');
  assert.equal(textOf(b[3]), '####### seven\n#nospace');
});

test('emphasis and strong', () => {
  const p = blocks('a *em* b **strong** c _u_ d __uu__ e ***both***')[0];
  const types = p.children.map((n) => n.type);
  assert.deepEqual(types, ['text', 'em', 'text', 'strong', 'text', 'em', 'text', 'strong', 'text', 'strong']);
  assert.equal(p.children[9].children[0].type, 'em');
  assert.equal(textOf(p), 'a em b strong c u d uu e both');
});

test('stray or intraword delimiters stay text', () => {
  for (const s of ['2 * 3 * 4', 'snake_case_name', '**unclosed', 'a * b']) {
    const p = blocks(s)[0];
    assert.deepEqual(p.children, [{ type: 'text', value: s }], s);
  }
});

test('fenced code block with language', () => {
  const b = blocks('before\n```js\nconst a = "<b>";\n\nx();\n```\nafter');
  assert.deepEqual(b.map((n) => n.type), ['paragraph', 'code', 'paragraph']);
  assert.equal(b[1].lang, 'js');
  assert.equal(b[1].text, 'const a = "<b>";\n\nx();');
});

test('fenced code block without language, tildes and longer fences', () => {
  assert.deepEqual(blocks('```\nplain *not em*\n```')[0], { type: 'code', lang: '', text: 'plain *not em*' });
  assert.deepEqual(blocks('~~~\na\n~~~')[0], { type: 'code', lang: '', text: 'a' });
  assert.deepEqual(blocks('````md\n```\ninner\n```\n````')[0], { type: 'code', lang: 'md', text: '```\ninner\n```' });
});

test('unterminated fence runs to the end of the text', () => {
  const b = blocks('intro\n```python\nprint(1)\n# not a heading');
  assert.equal(b.length, 2);
  assert.deepEqual(b[1], { type: 'code', lang: 'python', text: 'print(1)\n# not a heading' });
});

test('inline code keeps its content literally', () => {
  const p = blocks('use `a *b* <c>` and ``x ` y``')[0];
  assert.deepEqual(p.children, [
    { type: 'text', value: 'use ' },
    { type: 'inlineCode', value: 'a *b* <c>' },
    { type: 'text', value: ' and ' },
    { type: 'inlineCode', value: 'x ` y' },
  ]);
  assert.deepEqual(blocks('a `unclosed')[0].children, [{ type: 'text', value: 'a `unclosed' }]);
});

test('bullet and numbered lists, nesting, start number', () => {
  const b = blocks('- one\n- two\n  - inner\n* other\n\n3. three\n4. four');
  assert.deepEqual(b.map((n) => [n.type, n.ordered]), [['list', false], ['list', false], ['list', true]]);
  assert.equal(b[0].items.length, 2);
  const nested = b[0].items[1].children;
  assert.deepEqual(nested.map((n) => n.type), ['paragraph', 'list']);
  assert.equal(textOf(nested[1]), 'inner');
  assert.equal(b[2].start, 3);
  assert.deepEqual(b[2].items.map(textOf), ['three', 'four']);
});

test('list items separated by blank lines stay one list', () => {
  const b = blocks('1. a\n\n2. b\n\n   more of b\n\nafter');
  assert.deepEqual(b.map((n) => n.type), ['list', 'paragraph']);
  assert.equal(b[0].items.length, 2);
  assert.deepEqual(b[0].items[1].children.map(textOf), ['b', 'more of b']);
});

test('blockquote, rule and line breaks', () => {
  const b = blocks('> quoted\n> **text**\n\n---\n\nline one\nline two');
  assert.equal(b[0].type, 'blockquote');
  assert.equal(textOf(b[0]), 'quoted\ntext');
  assert.equal(b[1].type, 'hr');
  assert.deepEqual(b[2].children, [
    { type: 'text', value: 'line one' }, { type: 'break' }, { type: 'text', value: 'line two' },
  ]);
});

test('http and https links are kept', () => {
  const p = blocks('[site](https://example.com/a?b=1) and [plain](http://x.test) and https://bare.example/path.')[0];
  const links = p.children.filter((n) => n.type === 'link');
  assert.deepEqual(links.map((l) => l.href), ['https://example.com/a?b=1', 'http://x.test', 'https://bare.example/path']);
  assert.equal(textOf(links[0]), 'site');
  assert.equal(p.children[p.children.length - 1].value, '.');
  const auto = parseInline('<https://example.org>');
  assert.deepEqual(auto, [{ type: 'link', href: 'https://example.org', children: [{ type: 'text', value: 'https://example.org' }] }]);
});

test('other schemes are not made links', () => {
  const inputs = [
    '[x](javascript:alert(1))',
    '[x](JavaScript:alert(1))',
    '[x](data:text/html,<script>alert(1)</script>)',
    '[x](vbscript:msgbox)',
    '[x](file:///etc/passwd)',
    '[x](//evil.example)',
    '<javascript:alert(1)>',
    'javascript:alert(1)',
  ];
  for (const s of inputs) {
    const root = parseMarkdown(s);
    walk(root, (n) => assert.notEqual(n.type, 'link', s));
    assert.equal(textOf(root), s, s);
  }
  assert.equal(isSafeUrl('https://ok.example'), true);
  assert.equal(isSafeUrl('javascript:alert(1)'), false);
  assert.equal(isSafeUrl('https://a b'), false);
});

test('HTML comes out only as text', () => {
  const inputs = [
    '<img src=x onerror=alert(1)>',
    '<script>alert(1)</script>',
    'para <b>bold?</b>\n\n- <iframe src="https://x">\n\n> <svg onload=alert(1)>',
    '# <h1>head</h1>',
    '**<script>**',
    '[<img src=x onerror=alert(1)>](https://example.com)',
  ];
  for (const s of inputs) {
    const root = parseMarkdown(s);
    walk(root, (n) => assert.ok(ALLOWED_TYPES.has(n.type), `${n.type} in ${s}`));
    const text = textOf(root);
    for (const tag of s.match(/<[^>]+>/g)) assert.ok(text.includes(tag), `${tag} kept as text in ${s}`);
  }
  assert.deepEqual(blocks('<img src=x onerror=alert(1)>'), [
    { type: 'paragraph', children: [{ type: 'text', value: '<img src=x onerror=alert(1)>' }] },
  ]);
  assert.deepEqual(blocks('<script>alert(1)</script>')[0].children, [{ type: 'text', value: '<script>alert(1)</script>' }]);
});

test('backslash escapes', () => {
  assert.deepEqual(blocks('\\*not em\\* \\[x](y) \\`z`')[0].children, [{ type: 'text', value: '*not em* [x](y) `z`' }]);
});

test('empty, odd and large inputs', () => {
  assert.deepEqual(parseMarkdown(''), { type: 'root', children: [] });
  assert.deepEqual(parseMarkdown(undefined), { type: 'root', children: [] });
  assert.equal(blocks('a\r\nb')[0].children.length, 3);
  const deep = '>'.repeat(500) + ' x\n' + '- '.repeat(500) + 'y';
  assert.ok(parseMarkdown(deep).children.length > 0);
  const stars = '*a '.repeat(3000);
  const start = Date.now();
  assert.equal(textOf(parseMarkdown(stars)), stars.trim());
  assert.ok(Date.now() - start < 2000);
});
