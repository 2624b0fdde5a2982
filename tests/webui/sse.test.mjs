// Tests of the chat page's server-sent events reader (webui/api.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const { SseParser } = await import(new URL('../../webui/api.js', import.meta.url));

function collect(pieces) {
  const out = [];
  const p = new SseParser((d) => out.push(d));
  for (const piece of pieces) p.push(piece);
  p.end();
  return out;
}

const STREAM = 'data: {"t":"héllo 👋"}\n\n: comment\n\ndata: {"t":"x"}\r\n\r\ndata: [DONE]\n\n';

test('whole stream', () => {
  assert.deepEqual(collect([new TextEncoder().encode(STREAM)]), ['{"t":"héllo 👋"}', '{"t":"x"}', '[DONE]']);
});

test('every split point, also inside UTF-8 characters and lines', () => {
  const bytes = new TextEncoder().encode(STREAM);
  for (let i = 0; i <= bytes.length; i++) {
    for (const j of [i, Math.min(bytes.length, i + 3)]) {
      const got = collect([bytes.slice(0, i), bytes.slice(i, j), bytes.slice(j)]);
      assert.deepEqual(got, ['{"t":"héllo 👋"}', '{"t":"x"}', '[DONE]'], `split at ${i}/${j}`);
    }
  }
});

test('byte by byte, multi-line data, missing final blank line', () => {
  const bytes = new TextEncoder().encode('data: a\ndata: b\n\ndata:c');
  assert.deepEqual(collect([...bytes].map((b) => Uint8Array.of(b))), ['a\nb', 'c']);
});
