// DOM construction: Markdown trees, messages and the conversation list.
// Text is only ever placed with textContent / text nodes.

import { parseMarkdown, isSafeUrl } from './markdown.js';

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text != null) e.textContent = text;
  return e;
}

function button(className, label, title) {
  const b = el('button', className, label);
  b.type = 'button';
  if (title) {
    b.title = title;
    b.setAttribute('aria-label', title);
  }
  return b;
}

// Copies text to the clipboard; falls back to a selection copy where the
// asynchronous clipboard is not available (plain http on another host).
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the selection copy
  }
  const ta = el('textarea', 'copy-buffer');
  ta.value = text;
  ta.setAttribute('readonly', '');
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

export function flashButton(btn, text) {
  const original = btn.dataset.label ?? btn.textContent;
  btn.dataset.label = original;
  btn.textContent = text;
  clearTimeout(btn.flashTimer);
  btn.flashTimer = setTimeout(() => {
    btn.textContent = original;
  }, 1500);
}

function codeBlock(node) {
  const wrap = el('div', 'code-block');
  const head = el('div', 'code-head');
  head.appendChild(el('span', 'code-lang', node.lang || 'text'));
  const copy = button('code-copy', 'Copy', 'Copy code');
  head.appendChild(copy);
  const pre = el('pre');
  const code = el('code', null, node.text);
  const lang = (node.lang || '').replace(/[^A-Za-z0-9_+-]/g, '');
  if (lang) code.className = `language-${lang}`;
  pre.appendChild(code);
  wrap.append(head, pre);
  return wrap;
}

function link(node) {
  if (!isSafeUrl(node.href)) return null;
  let url;
  try {
    url = new URL(node.href);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const a = el('a');
  a.href = url.href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  return a;
}

function inlineNode(node) {
  switch (node.type) {
    case 'text': return document.createTextNode(node.value);
    case 'break': return el('br');
    case 'inlineCode': return el('code', null, node.value);
    case 'strong': return withChildren(el('strong'), node.children);
    case 'em': return withChildren(el('em'), node.children);
    case 'link': {
      const a = link(node);
      return a ? withChildren(a, node.children) : withChildren(el('span'), node.children);
    }
    default: return null;
  }
}

function blockNode(node) {
  switch (node.type) {
    case 'paragraph': return withChildren(el('p'), node.children);
    case 'heading': return withChildren(el(`h${Math.min(6, Math.max(1, node.level | 0))}`), node.children);
    case 'code': return codeBlock(node);
    case 'hr': return el('hr');
    case 'blockquote': return withChildren(el('blockquote'), node.children);
    case 'list': {
      const list = el(node.ordered ? 'ol' : 'ul');
      if (node.ordered && node.start !== 1) list.start = node.start;
      for (const item of node.items) list.appendChild(withChildren(el('li'), item.children));
      return list;
    }
    default: return inlineNode(node);
  }
}

function withChildren(parent, children) {
  for (const child of children || []) {
    const n = blockNode(child);
    if (n) parent.appendChild(n);
  }
  return parent;
}

export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  withChildren(frag, parseMarkdown(text).children);
  return frag;
}

// ---------------------------------------------------------------- messages

export function formatStats(s) {
  if (!s) return '';
  const parts = [];
  if (Number.isFinite(s.tps) && s.tps > 0) parts.push(`${s.tps.toFixed(1)} tokens/s`);
  if (Number.isFinite(s.ttftMs)) parts.push(`TTFT ${Math.round(s.ttftMs)} ms`);
  if (Number.isFinite(s.tokens)) parts.push(`${s.tokens} token${s.tokens === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

function statsText(msg) {
  const parts = [];
  const stats = formatStats(msg.stats);
  if (stats) parts.push(stats);
  if (msg.finish === 'length') parts.push('length limit reached');
  if (msg.stopped) parts.push('stopped');
  if (msg.interrupted) parts.push('interrupted');
  return parts.join(' · ');
}

function ensureChild(parent, selector, make, before) {
  let child = parent.querySelector(`:scope > ${selector}`);
  if (!child) {
    child = make();
    parent.insertBefore(child, before || null);
  }
  return child;
}

function updateReasoning(node, msg) {
  const content = node.querySelector(':scope > .msg-content');
  if (!msg.reasoning) {
    node.querySelector(':scope > .msg-reasoning')?.remove();
    return;
  }
  const details = ensureChild(node, 'details.msg-reasoning', () => {
    const d = el('details', 'msg-reasoning');
    d.appendChild(el('summary', null, 'Reasoning'));
    d.appendChild(el('div', 'msg-reasoning-text'));
    return d;
  }, content);
  const summary = details.querySelector('summary');
  const label = msg.streaming && !msg.content ? 'Reasoning…' : 'Reasoning';
  if (summary.textContent !== label) summary.textContent = label;
  details.querySelector('.msg-reasoning-text').textContent = msg.reasoning;
}

function updateError(node, msg) {
  const existing = node.querySelector(':scope > .msg-error');
  if (!msg.error) {
    existing?.remove();
    return;
  }
  const box = existing || el('div', 'msg-error');
  box.setAttribute('role', 'alert');
  box.textContent = msg.error;
  if (!existing) node.insertBefore(box, node.querySelector(':scope > .msg-foot'));
}

function footButtons(msg, isLastAssistant) {
  const out = [button('msg-copy', 'Copy', 'Copy message')];
  if (msg.role === 'user') out.push(button('msg-edit', 'Edit', 'Edit and resend'));
  if (msg.role === 'assistant' && isLastAssistant && !msg.streaming) {
    out.push(button('msg-regenerate', 'Regenerate', 'Regenerate answer'));
  }
  return out;
}

function updateFoot(node, msg, opts) {
  const foot = node.querySelector(':scope > .msg-foot');
  const actions = foot.querySelector('.msg-actions');
  const key = `${msg.role}|${opts.isLastAssistant}|${msg.streaming}|${opts.busy}`;
  if (actions.dataset.key !== key) {
    actions.dataset.key = key;
    actions.replaceChildren(...footButtons(msg, opts.isLastAssistant));
    if (opts.busy) {
      for (const b of actions.querySelectorAll('.msg-edit, .msg-regenerate')) b.disabled = true;
    }
  }
  if (msg.role !== 'assistant') return;
  const stats = ensureChild(foot, '.msg-stats', () => el('span', 'msg-stats'), actions);
  const text = msg.streaming ? (msg.content || msg.reasoning ? 'generating…' : 'waiting…') : statsText(msg);
  if (stats.textContent !== text) stats.textContent = text;
}

// Brings a message element in line with its message object.
export function updateMessage(node, msg, opts = {}) {
  node.dataset.role = msg.role;
  if (msg.role === 'assistant') {
    node.dataset.streaming = msg.streaming ? 'true' : 'false';
    node.dataset.stopped = msg.stopped ? 'true' : 'false';
    updateReasoning(node, msg);
  }
  const content = node.querySelector(':scope > .msg-content');
  if (content.renderedText !== msg.content) {
    content.renderedText = msg.content;
    if (msg.role === 'assistant') content.replaceChildren(renderMarkdown(msg.content));
    else content.textContent = msg.content;
  }
  updateError(node, msg);
  updateFoot(node, msg, opts);
}

export function createMessage(msg, opts = {}) {
  const node = el('article', 'msg');
  node.dataset.id = msg.id;
  const label = msg.role === 'user' ? 'You' : 'Assistant';
  node.setAttribute('aria-label', label);
  node.appendChild(el('div', 'msg-role', label));
  node.appendChild(el('div', msg.role === 'user' ? 'msg-content msg-plain' : 'msg-content'));
  const foot = el('div', 'msg-foot');
  foot.appendChild(el('div', 'msg-actions'));
  node.appendChild(foot);
  updateMessage(node, msg, opts);
  return node;
}

// Turns a user message into an editor; returns the textarea.
export function openEditor(node, text) {
  const content = node.querySelector(':scope > .msg-content');
  content.hidden = true;
  node.querySelector(':scope > .msg-foot').hidden = true;
  const form = el('div', 'msg-editor');
  const input = el('textarea', 'msg-edit-input');
  input.value = text;
  input.rows = Math.min(12, Math.max(2, text.split('\n').length));
  input.setAttribute('aria-label', 'Edit message');
  const row = el('div', 'msg-editor-actions');
  row.append(button('msg-edit-cancel secondary', 'Cancel'), button('msg-edit-send primary', 'Send'));
  form.append(input, row);
  node.insertBefore(form, content.nextSibling);
  return input;
}

// ---------------------------------------------------------------- sidebar

export function renderConversationList(list, conversations, currentId) {
  const items = conversations.map((c) => {
    const li = el('li', 'conv-item');
    li.dataset.id = c.id;
    const title = c.title || 'New chat';
    const open = button('conv-title', title);
    open.title = title;
    const del = button('conv-delete', '×', `Delete conversation: ${title}`);
    if (c.id === currentId) {
      li.setAttribute('aria-current', 'true');
      open.setAttribute('aria-current', 'page');
    }
    li.append(open, del);
    return li;
  });
  list.replaceChildren(...items);
}
