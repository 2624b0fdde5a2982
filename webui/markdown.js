// A small Markdown subset parser: text in, a tree of plain objects out.
// No DOM use, so it runs in the browser and under Node alike.
//
// Block nodes:  root{children}, paragraph{children}, heading{level, children},
//               code{lang, text}, list{ordered, start, items}, item{children},
//               blockquote{children}, hr
// Inline nodes: text{value}, strong{children}, em{children},
//               inlineCode{value}, link{href, children}, break
//
// Every character of the input ends up in a text, code or inlineCode value;
// nothing is ever treated as HTML.

const MAX_DEPTH = 16;

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const AUTOLINK = /^<(https?:\/\/[^\s<>]+)>/i;
const BARE_URL = /^https?:\/\/[^\s<>"'`]+/i;
const PUNCT = /[!-/:-@[-`{-~]/;

export function isSafeUrl(href) {
  return typeof href === 'string' && /^https?:\/\/[^\s\x00-\x1f]+$/i.test(href);
}

function expandTabs(line) {
  // Leading tabs count as four spaces each; the rest of the line is kept.
  const m = /^[ \t]+/.exec(line);
  if (!m || m[0].indexOf('\t') < 0) return line;
  let col = 0;
  for (const ch of m[0]) col = ch === '\t' ? col + 4 - (col % 4) : col + 1;
  return ' '.repeat(col) + line.slice(m[0].length);
}

const isBlank = (line) => /^[ \t]*$/.test(line);
const indentOf = (line) => /^ */.exec(line)[0].length;

function listMarker(line) {
  const m = LIST_ITEM.exec(line);
  if (!m) return null;
  const marker = m[2];
  const ordered = /\d/.test(marker[0]);
  const spaces = m[3].length;
  const pad = spaces === 0 || spaces > 4 ? 1 : spaces;
  const content = spaces > 4 ? ' '.repeat(spaces - 1) + m[4] : m[4];
  return {
    ordered,
    delim: ordered ? marker[marker.length - 1] : marker,
    start: ordered ? parseInt(marker, 10) : 1,
    indent: m[1].length + marker.length + pad,
    content,
  };
}

function fenceOpen(line) {
  const m = FENCE_OPEN.exec(line);
  if (!m) return null;
  const info = m[3].trim();
  if (m[2][0] === '`' && info.includes('`')) return null;
  return { indent: m[1].length, fence: m[2], lang: info.split(/\s+/)[0] || '' };
}

// Whether a line begins a block other than a paragraph continuation.
function startsBlock(line, inParagraph) {
  if (fenceOpen(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line)) return true;
  const li = listMarker(line);
  if (!li) return false;
  if (!inParagraph) return true;
  // Inside a paragraph only a non-empty bullet or an ordered list starting at 1 interrupts it.
  return li.content.trim() !== '' && (!li.ordered || li.start === 1);
}

function parseFence(lines, i, open) {
  const body = [];
  let j = i + 1;
  for (; j < lines.length; j++) {
    const close = FENCE_CLOSE.exec(lines[j]);
    if (close && close[1][0] === open.fence[0] && close[1].length >= open.fence.length) {
      j++;
      return { node: { type: 'code', lang: open.lang, text: body.join('\n') }, next: j };
    }
    const line = lines[j];
    const strip = Math.min(open.indent, indentOf(line));
    body.push(line.slice(strip));
  }
  // Unterminated: the code block runs to the end of the text.
  return { node: { type: 'code', lang: open.lang, text: body.join('\n') }, next: j };
}

function parseQuote(lines, i, depth) {
  const inner = [];
  let j = i;
  while (j < lines.length) {
    const m = QUOTE.exec(lines[j]);
    if (m) {
      inner.push(m[1]);
    } else if (!isBlank(lines[j]) && inner.length && !isBlank(inner[inner.length - 1]) &&
               !startsBlock(lines[j], true)) {
      inner.push(lines[j]); // lazy continuation of a quoted paragraph
    } else {
      break;
    }
    j++;
  }
  return { node: { type: 'blockquote', children: parseBlocks(inner, depth + 1) }, next: j };
}

function parseListItem(lines, i, m) {
  const itemLines = [m.content];
  let j = i + 1;
  let lastBlank = m.content.trim() === '';
  for (; j < lines.length; j++) {
    const line = lines[j];
    if (isBlank(line)) {
      itemLines.push('');
      lastBlank = true;
    } else if (indentOf(line) >= m.indent) {
      itemLines.push(line.slice(m.indent));
      lastBlank = false;
    } else if (!lastBlank && !startsBlock(line, true) && !listMarker(line)) {
      itemLines.push(line.trimStart()); // lazy continuation
    } else {
      break;
    }
  }
  while (itemLines.length && isBlank(itemLines[itemLines.length - 1])) itemLines.pop();
  return { lines: itemLines, next: j };
}

function parseList(lines, i, depth) {
  const first = listMarker(lines[i]);
  const node = { type: 'list', ordered: first.ordered, start: first.start, items: [] };
  let j = i;
  while (j < lines.length) {
    const m = listMarker(lines[j]);
    if (!m || m.ordered !== first.ordered || m.delim !== first.delim) break;
    const item = parseListItem(lines, j, m);
    node.items.push({ type: 'item', children: parseBlocks(item.lines, depth + 1) });
    j = item.next;
    while (j < lines.length && isBlank(lines[j])) j++;
    const again = j < lines.length ? listMarker(lines[j]) : null;
    if (!again || again.ordered !== first.ordered || again.delim !== first.delim) break;
  }
  return { node, next: j };
}

function parseParagraph(lines, i, depth) {
  const text = [lines[i].trim()];
  let j = i + 1;
  while (j < lines.length && !isBlank(lines[j]) && !startsBlock(lines[j], true)) {
    text.push(lines[j].trim());
    j++;
  }
  return { node: { type: 'paragraph', children: parseInline(text.join('\n'), depth) }, next: j };
}

function parseBlock(lines, i, depth) {
  const line = lines[i];
  const fence = fenceOpen(line);
  if (fence) return parseFence(lines, i, fence);
  const h = HEADING.exec(line);
  if (h) {
    const node = { type: 'heading', level: h[1].length, children: parseInline(h[2] || '', depth) };
    return { node, next: i + 1 };
  }
  if (HR.test(line)) return { node: { type: 'hr' }, next: i + 1 };
  if (depth < MAX_DEPTH) {
    if (QUOTE.test(line)) return parseQuote(lines, i, depth);
    if (listMarker(line)) return parseList(lines, i, depth);
  }
  return parseParagraph(lines, i, depth);
}

function parseBlocks(lines, depth) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    if (isBlank(lines[i])) {
      i++;
      continue;
    }
    const { node, next } = parseBlock(lines, i, depth);
    out.push(node);
    i = Math.max(next, i + 1);
  }
  return out;
}

export function parseMarkdown(text) {
  const src = String(text ?? '').replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD');
  const lines = src.split('\n').map(expandTabs);
  return { type: 'root', children: parseBlocks(lines, 0) };
}

// ---------------------------------------------------------------- inline

const isSpace = (ch) => ch === undefined || /\s/.test(ch);
const isWordChar = (ch) => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);

function runLength(s, i, ch) {
  let n = 0;
  while (s[i + n] === ch) n++;
  return n;
}

function parseCodeSpan(s, i) {
  const n = runLength(s, i, '`');
  let j = i + n;
  while (j < s.length) {
    const k = s.indexOf('`', j);
    if (k < 0) break;
    const m = runLength(s, k, '`');
    if (m === n) {
      let value = s.slice(i + n, k).replace(/\n/g, ' ');
      if (value.length > 2 && value[0] === ' ' && value[value.length - 1] === ' ' && value.trim()) {
        value = value.slice(1, -1);
      }
      return { node: { type: 'inlineCode', value }, next: k + m };
    }
    j = k + m;
  }
  return { text: s.slice(i, i + n), next: i + n };
}

// Finds the closing delimiter for an emphasis run opened at `from`.
function findCloser(s, from, ch, size) {
  let k = from;
  while (k < s.length) {
    k = s.indexOf(ch, k);
    if (k < 0) return -1;
    const run = runLength(s, k, ch);
    if (run >= size && !isSpace(s[k - 1]) && k > from) {
      // For a run longer than needed, the closer is its last `size` characters.
      const at = k + run - size;
      if (ch !== '_' || !isWordChar(s[at + size])) {
        if (size === 2 || run !== 2) return at;
      }
    }
    k += run;
  }
  return -1;
}

function parseEmphasis(s, i, depth) {
  const ch = s[i];
  const run = runLength(s, i, ch);
  if (ch === '_' && isWordChar(s[i - 1])) return { text: s.slice(i, i + run), next: i + run };
  for (const size of run >= 2 ? [2, 1] : [1]) {
    if (isSpace(s[i + size])) continue;
    const close = findCloser(s, i + size, ch, size);
    if (close < 0) continue;
    const inner = s.slice(i + size, close);
    if (!inner) continue;
    const type = size === 2 ? 'strong' : 'em';
    return { node: { type, children: parseInline(inner, depth + 1) }, next: close + size };
  }
  return { text: s.slice(i, i + run), next: i + run };
}

function matchBracket(s, i) {
  let level = 0;
  for (let j = i; j < s.length; j++) {
    const c = s[j];
    if (c === '\\') j++;
    else if (c === '[') level++;
    else if (c === ']' && --level === 0) return j;
  }
  return -1;
}

function parseLink(s, i, depth) {
  const close = matchBracket(s, i);
  if (close < 0 || s[close + 1] !== '(') return { text: '[', next: i + 1 };
  const m = /^\(\s*<?([^\s<>()]*(?:\([^\s()]*\)[^\s<>()]*)*)>?(?:\s+"[^"]*")?\s*\)/.exec(s.slice(close + 1));
  if (!m) return { text: '[', next: i + 1 };
  const end = close + 1 + m[0].length;
  const href = m[1];
  if (!isSafeUrl(href)) return { text: s.slice(i, end), next: end };
  const label = s.slice(i + 1, close);
  const children = label ? parseInline(label, depth + 1, true) : [{ type: 'text', value: href }];
  return { node: { type: 'link', href, children }, next: end };
}

function trimUrl(url) {
  let u = url.replace(/[.,;:!?'"*_~]+$/, '');
  while (u.endsWith(')') && (u.match(/\(/g) || []).length < (u.match(/\)/g) || []).length) {
    u = u.slice(0, -1).replace(/[.,;:!?'"*_~]+$/, '');
  }
  return u;
}

function parseBareUrl(s, i) {
  const m = BARE_URL.exec(s.slice(i));
  const url = m ? trimUrl(m[0]) : '';
  if (!url || !/^https?:\/\/[^/?#]/i.test(url)) return null;
  return { node: { type: 'link', href: url, children: [{ type: 'text', value: url }] }, next: i + url.length };
}

function inlineStep(s, i, depth, inLink) {
  const c = s[i];
  if (c === '\\') {
    const n = s[i + 1];
    if (n === '\n') return { node: { type: 'break' }, next: i + 2 };
    if (n !== undefined && PUNCT.test(n)) return { text: n, next: i + 2 };
    return { text: c, next: i + 1 };
  }
  if (c === '\n') return { node: { type: 'break' }, next: i + 1 };
  if (c === '`') return parseCodeSpan(s, i);
  if (depth >= MAX_DEPTH) return null;
  if (c === '*' || c === '_') return parseEmphasis(s, i, depth);
  if (inLink) return null;
  if (c === '[') return parseLink(s, i, depth);
  if (c === '<') {
    const m = AUTOLINK.exec(s.slice(i, i + 2048));
    if (m) return { node: { type: 'link', href: m[1], children: [{ type: 'text', value: m[1] }] }, next: i + m[0].length };
    return null;
  }
  if ((c === 'h' || c === 'H') && !isWordChar(s[i - 1])) return parseBareUrl(s, i);
  return null;
}

export function parseInline(text, depth = 0, inLink = false) {
  const s = String(text ?? '');
  const out = [];
  let buf = '';
  const flush = () => {
    if (buf) out.push({ type: 'text', value: buf });
    buf = '';
  };
  let i = 0;
  while (i < s.length) {
    const step = inlineStep(s, i, depth, inLink);
    if (!step) {
      buf += s[i];
      i++;
    } else if (step.node) {
      if (step.node.type === 'break') buf = buf.replace(/[ \t]+$/, '');
      flush();
      out.push(step.node);
      i = step.next;
    } else {
      buf += step.text;
      i = step.next;
    }
  }
  flush();
  return out;
}
