// The chat page: conversations, streaming answers, settings and server status.

import { ApiError, getHealth, getModels, streamChat } from './api.js';
import { loadSettings, loadConversations, saveConversations, newId } from './store.js';
import {
  createMessage, updateMessage, openEditor, renderConversationList, copyText, flashButton,
} from './render.js';
import { SettingsDialog, requestFields } from './settings.js';

const $ = (id) => document.getElementById(id);
const SAVE_INTERVAL_MS = 500;
const RETRY_MS = 2000;
const NARROW = window.matchMedia('(max-width: 800px)');

const state = {
  settings: loadSettings(),
  conversations: [],
  currentId: null,
  model: null,
  run: null, // { conv, msg, controller }
  renderPending: false,
  lastSave: 0,
};

const ui = {
  messages: $('messages'),
  prompt: $('prompt-input'),
  send: $('send'),
  stop: $('stop'),
  list: $('conversations'),
  status: $('status'),
  modelName: $('model-name'),
  modelCtx: $('model-ctx'),
  toggle: $('sidebar-toggle'),
};

let settingsDialog;

// ---------------------------------------------------------------- helpers

function setStatus(text, kind = 'info') {
  ui.status.textContent = text || '';
  ui.status.dataset.kind = text ? kind : '';
}

function current() {
  return state.conversations.find((c) => c.id === state.currentId) || null;
}

function titleFrom(text) {
  const line = text.trim().split('\n')[0].replace(/\s+/g, ' ');
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

function persist() {
  state.lastSave = performance.now();
  const r = saveConversations(state.conversations, state.currentId);
  if (!r.ok) {
    setStatus('Browser storage is full: this conversation could not be saved.', 'error');
  } else if (r.dropped) {
    setStatus(`Browser storage was full: ${r.dropped} older conversation(s) removed.`, 'error');
    renderSidebar();
  }
}

function nearBottom() {
  const m = ui.messages;
  return m.scrollHeight - m.scrollTop - m.clientHeight < 80;
}

function scrollToBottom() {
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

function messageNode(msg) {
  for (const node of ui.messages.querySelectorAll(':scope > .msg')) {
    if (node.dataset.id === msg.id) return node;
  }
  return null;
}

// ---------------------------------------------------------------- rendering

function renderSidebar() {
  const sorted = state.conversations.slice().sort((a, b) => b.updated - a.updated);
  renderConversationList(ui.list, sorted, state.currentId);
}

function messageOpts(conv, msg) {
  const lastAssistant = [...conv.messages].reverse().find((m) => m.role === 'assistant');
  return { isLastAssistant: lastAssistant === msg, busy: !!state.run };
}

function emptyState() {
  const box = document.createElement('div');
  box.className = 'empty';
  const h = document.createElement('h2');
  h.textContent = 'How can I help?';
  const p = document.createElement('p');
  p.textContent = state.model
    ? `Chatting with ${state.model.id}. Enter sends, Shift+Enter adds a line.`
    : 'Enter sends, Shift+Enter adds a line.';
  box.append(h, p);
  return box;
}

function renderMessages(scroll = true) {
  const conv = current();
  if (!conv || !conv.messages.length) {
    ui.messages.replaceChildren(emptyState());
    return;
  }
  const top = ui.messages.scrollTop;
  ui.messages.replaceChildren(...conv.messages.map((m) => createMessage(m, messageOpts(conv, m))));
  if (scroll) scrollToBottom();
  else ui.messages.scrollTop = top;
}

function refreshMessage(conv, msg) {
  if (conv !== current()) return;
  const node = messageNode(msg);
  if (!node) return;
  const stick = nearBottom();
  updateMessage(node, msg, messageOpts(conv, msg));
  if (stick) scrollToBottom();
}

function scheduleRefresh(conv, msg) {
  if (state.renderPending) return;
  state.renderPending = true;
  requestAnimationFrame(() => {
    state.renderPending = false;
    refreshMessage(conv, msg);
  });
}

function setBusy(busy) {
  ui.stop.hidden = !busy;
  ui.send.disabled = busy;
  ui.messages.setAttribute('aria-busy', busy ? 'true' : 'false');
}

function renderAll() {
  renderSidebar();
  renderMessages();
}

// ---------------------------------------------------------------- generation

function apiMessages(conv, upTo) {
  const out = [];
  const system = state.settings.system?.trim();
  if (system) out.push({ role: 'system', content: state.settings.system });
  for (const m of conv.messages) {
    if (m === upTo) break;
    if (m.role === 'assistant' && !m.content) continue;
    out.push({ role: m.role, content: m.content });
  }
  return out;
}

function requestBody(conv, msg) {
  const body = {
    messages: apiMessages(conv, msg),
    stream: true,
    stream_options: { include_usage: true },
    ...requestFields(state.settings),
  };
  if (state.model?.id && body.model === undefined) body.model = state.model.id;
  body.stream = true;
  return body;
}

function applyChunk(run, chunk) {
  const { msg } = run;
  if (chunk.error) {
    msg.error = String(chunk.error.message || chunk.error);
    return;
  }
  if (chunk.usage && Number.isFinite(chunk.usage.completion_tokens)) run.usage = chunk.usage;
  const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : null;
  if (!choice) return;
  const delta = choice.delta || {};
  const text = typeof delta.content === 'string' ? delta.content : '';
  const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : '';
  if (text || reasoning) {
    const now = performance.now();
    if (run.firstAt == null) run.firstAt = now;
    run.chunks++;
    msg.content += text;
    if (reasoning) msg.reasoning = (msg.reasoning || '') + reasoning;
  }
  if (choice.finish_reason) msg.finish = choice.finish_reason;
}

function finishStats(run) {
  const end = performance.now();
  const tokens = run.usage ? run.usage.completion_tokens : run.chunks;
  const stats = { tokens };
  if (run.firstAt != null) {
    stats.ttftMs = run.firstAt - run.startAt;
    const seconds = (end - run.firstAt) / 1000;
    if (seconds >= 0.01 && tokens > 0) stats.tps = tokens / seconds;
  }
  if (run.usage && Number.isFinite(run.usage.prompt_tokens)) stats.promptTokens = run.usage.prompt_tokens;
  return stats;
}

function describeError(err) {
  if (err instanceof ApiError) {
    if (err.status === 401) return 'The server needs an API key. Set it in Settings.';
    return err.message || `Request failed (${err.status}).`;
  }
  return `Could not reach the server: ${err?.message || err}`;
}

async function generate(conv) {
  const msg = { id: newId(), role: 'assistant', content: '', streaming: true };
  conv.messages.push(msg);
  conv.updated = Date.now();
  const run = { conv, msg, controller: new AbortController(), chunks: 0, startAt: performance.now() };
  state.run = run;
  setBusy(true);
  persist();
  renderAll();
  try {
    await streamChat({
      body: requestBody(conv, msg),
      apiKey: state.settings.apiKey,
      signal: run.controller.signal,
      onChunk: (chunk) => {
        applyChunk(run, chunk);
        scheduleRefresh(conv, msg);
        if (performance.now() - state.lastSave > SAVE_INTERVAL_MS) persist();
      },
    });
  } catch (err) {
    if (run.controller.signal.aborted || err?.name === 'AbortError') {
      msg.stopped = true;
    } else {
      msg.error = describeError(err);
      if (err instanceof ApiError && err.status === 401) askForKey();
    }
  }
  msg.streaming = false;
  msg.stats = finishStats(run);
  conv.updated = Date.now();
  state.run = null;
  setBusy(false);
  persist();
  if (conv === current()) renderMessages(nearBottom());
  if (document.activeElement === document.body || !document.activeElement) ui.prompt.focus();
}

function stop() {
  state.run?.controller.abort();
}

function send() {
  const text = ui.prompt.value;
  if (!text.trim() || state.run) return;
  let conv = current();
  if (!conv) {
    conv = { id: newId(), title: '', created: Date.now(), updated: Date.now(), messages: [] };
    state.conversations.push(conv);
    state.currentId = conv.id;
  }
  conv.messages.push({ id: newId(), role: 'user', content: text });
  if (!conv.title) conv.title = titleFrom(text);
  ui.prompt.value = '';
  autosize();
  generate(conv);
}

function regenerate() {
  const conv = current();
  if (!conv || state.run) return;
  const last = conv.messages[conv.messages.length - 1];
  if (last?.role === 'assistant') conv.messages.pop();
  if (!conv.messages.length) return;
  generate(conv);
}

// ---------------------------------------------------------------- editing

function startEdit(node) {
  const conv = current();
  const msg = conv?.messages.find((m) => m.id === node.dataset.id);
  if (!msg || state.run || node.querySelector('.msg-edit-input')) return;
  const input = openEditor(node, msg.content);
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
}

function finishEdit(node, resend) {
  const conv = current();
  const index = conv ? conv.messages.findIndex((m) => m.id === node.dataset.id) : -1;
  if (index < 0) return;
  const input = node.querySelector('.msg-edit-input');
  const text = input ? input.value : '';
  if (!resend || !text.trim() || state.run) {
    renderMessages(false);
    return;
  }
  const msg = conv.messages[index];
  msg.content = text;
  conv.messages.length = index + 1;
  if (index === 0) conv.title = titleFrom(text);
  generate(conv);
}

// ---------------------------------------------------------------- conversations

function closeSidebar() {
  document.body.classList.remove('sidebar-open');
  ui.toggle.setAttribute('aria-expanded', 'false');
}

function openConversation(id) {
  if (state.run && state.run.conv.id !== id) stop();
  state.currentId = id;
  persist();
  renderAll();
  if (NARROW.matches) closeSidebar();
  ui.prompt.focus();
}

function newChat() {
  if (state.run) stop();
  state.currentId = null;
  persist();
  renderAll();
  if (NARROW.matches) closeSidebar();
  ui.prompt.focus();
}

function deleteConversation(id) {
  if (state.run?.conv.id === id) stop();
  state.conversations = state.conversations.filter((c) => c.id !== id);
  if (state.currentId === id) state.currentId = null;
  persist();
  renderAll();
}

// ---------------------------------------------------------------- server

function askForKey() {
  const message = 'This server requires an API key. Enter it below; it is kept in this browser only.';
  setStatus('API key required: open Settings to enter it.', 'error');
  settingsDialog.open(message, 'set-api-key');
}

function showModel(model) {
  state.model = model || null;
  ui.modelName.textContent = model ? model.id : 'no model';
  const ctx = model?.meta?.n_ctx;
  ui.modelCtx.textContent = Number.isFinite(ctx) ? `ctx ${ctx.toLocaleString('en-US')}` : '';
  ui.modelCtx.hidden = !Number.isFinite(ctx);
  if (!current()?.messages.length) renderMessages();
}

async function loadModel() {
  try {
    const models = await getModels(state.settings.apiKey);
    showModel(models[0]);
    setStatus('');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      askForKey();
    } else {
      setStatus(`Could not list models: ${describeError(err)}`, 'error');
    }
  }
}

async function checkServer() {
  let health;
  try {
    health = await getHealth();
  } catch (err) {
    health = err instanceof ApiError ? `error ${err.status}` : 'down';
  }
  if (health === 'ok') {
    await loadModel();
    return;
  }
  if (health === 'loading') setStatus('The model is loading…', 'info');
  else setStatus(`Server not reachable (${health}); retrying…`, 'error');
  setTimeout(checkServer, RETRY_MS);
}

// ---------------------------------------------------------------- events

function autosize() {
  ui.prompt.style.height = 'auto';
  ui.prompt.style.height = `${Math.min(ui.prompt.scrollHeight, 240)}px`;
}

async function copyFrom(btn, text) {
  flashButton(btn, (await copyText(text)) ? 'Copied' : 'Copy failed');
}

function onMessagesClick(e) {
  const btn = e.target.closest('button');
  if (!btn || !ui.messages.contains(btn)) return;
  const node = btn.closest('.msg');
  const conv = current();
  const msg = conv?.messages.find((m) => m.id === node?.dataset.id);
  if (btn.classList.contains('code-copy')) {
    copyFrom(btn, btn.closest('.code-block').querySelector('pre code').textContent);
  } else if (btn.classList.contains('msg-copy') && msg) {
    copyFrom(btn, msg.content);
  } else if (btn.classList.contains('msg-edit')) {
    startEdit(node);
  } else if (btn.classList.contains('msg-edit-send')) {
    finishEdit(node, true);
  } else if (btn.classList.contains('msg-edit-cancel')) {
    finishEdit(node, false);
  } else if (btn.classList.contains('msg-regenerate')) {
    regenerate();
  }
}

function onMessagesKeydown(e) {
  if (!e.target.classList.contains('msg-edit-input')) return;
  const node = e.target.closest('.msg');
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    finishEdit(node, true);
  } else if (e.key === 'Escape') {
    e.preventDefault();
    finishEdit(node, false);
  }
}

function wireSidebar() {
  $('new-chat').addEventListener('click', newChat);
  ui.list.addEventListener('click', (e) => {
    const item = e.target.closest('.conv-item');
    if (!item) return;
    if (e.target.closest('.conv-delete')) deleteConversation(item.dataset.id);
    else openConversation(item.dataset.id);
  });
  ui.toggle.addEventListener('click', () => {
    const open = document.body.classList.toggle('sidebar-open');
    ui.toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
    if (open) $('new-chat').focus();
  });
  $('backdrop').addEventListener('click', closeSidebar);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && document.body.classList.contains('sidebar-open')) {
      closeSidebar();
      ui.toggle.focus();
    }
  });
}

function wire() {
  ui.send.addEventListener('click', send);
  ui.stop.addEventListener('click', stop);
  ui.prompt.addEventListener('input', autosize);
  ui.prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  ui.messages.addEventListener('click', onMessagesClick);
  ui.messages.addEventListener('keydown', onMessagesKeydown);
  $('settings-button').addEventListener('click', () => settingsDialog.open());
  wireSidebar();
  window.addEventListener('storage', (e) => {
    if (e.key && e.key.startsWith('inferd.') && !state.run) {
      const loaded = loadConversations();
      state.conversations = loaded.conversations;
      renderAll();
    }
  });
}

function init() {
  const loaded = loadConversations();
  state.conversations = loaded.conversations;
  state.currentId = state.conversations.some((c) => c.id === loaded.currentId) ? loaded.currentId : null;
  settingsDialog = new SettingsDialog(state.settings, {
    onSave: (_settings, stored) => {
      setStatus(stored ? '' : 'Settings could not be stored in this browser.', stored ? 'info' : 'error');
      loadModel();
    },
  });
  wire();
  setBusy(false);
  renderAll();
  autosize();
  ui.prompt.focus();
  checkServer();
}

init();
