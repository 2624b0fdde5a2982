// Persistence in localStorage: settings under one key, all conversations as
// one JSON blob under another. Falls back to memory where storage is missing.

const SETTINGS_KEY = 'inferd.settings';
const CHATS_KEY = 'inferd.conversations';

const memory = new Map();

function storage() {
  try {
    const s = window.localStorage;
    return s || null;
  } catch {
    return null;
  }
}

function readJson(key) {
  const s = storage();
  let text = null;
  try {
    text = s ? s.getItem(key) : memory.get(key) ?? null;
  } catch {
    text = memory.get(key) ?? null;
  }
  if (text == null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// Returns true when written; false when storage refused it (quota).
function writeJson(key, value) {
  const text = JSON.stringify(value);
  const s = storage();
  if (!s) {
    memory.set(key, text);
    return true;
  }
  try {
    s.setItem(key, text);
    return true;
  } catch {
    return false;
  }
}

export const DEFAULT_SETTINGS = Object.freeze({
  system: '',
  temperature: null,
  topP: null,
  maxTokens: null,
  seed: null,
  apiKey: '',
  custom: '',
});

export function loadSettings() {
  const saved = readJson(SETTINGS_KEY);
  const out = { ...DEFAULT_SETTINGS };
  if (saved && typeof saved === 'object') {
    for (const k of Object.keys(DEFAULT_SETTINGS)) {
      if (k in saved) out[k] = saved[k];
    }
  }
  return out;
}

export function saveSettings(settings) {
  return writeJson(SETTINGS_KEY, settings);
}

export function newId() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

function validMessage(m) {
  return m && typeof m === 'object' && (m.role === 'user' || m.role === 'assistant') &&
    typeof m.content === 'string';
}

// Loads conversations; an answer saved mid-stream comes back as interrupted.
export function loadConversations() {
  const saved = readJson(CHATS_KEY);
  const list = Array.isArray(saved?.conversations) ? saved.conversations : [];
  const conversations = [];
  for (const c of list) {
    if (!c || typeof c.id !== 'string' || !Array.isArray(c.messages)) continue;
    const messages = c.messages.filter(validMessage);
    for (const m of messages) {
      if (!m.id) m.id = newId();
      if (m.streaming) {
        m.streaming = false;
        m.interrupted = true;
      }
    }
    conversations.push({
      id: c.id,
      title: typeof c.title === 'string' ? c.title : '',
      created: Number(c.created) || Date.now(),
      updated: Number(c.updated) || Date.now(),
      messages,
    });
  }
  const currentId = typeof saved?.currentId === 'string' ? saved.currentId : null;
  return { conversations, currentId };
}

// Saves every conversation. When storage is full, the oldest conversations
// other than the current one are dropped until it fits. Returns
// { ok, dropped } where dropped counts conversations given up.
export function saveConversations(conversations, currentId) {
  const keep = conversations.slice();
  let dropped = 0;
  for (;;) {
    if (writeJson(CHATS_KEY, { version: 1, currentId, conversations: keep })) {
      if (dropped) {
        conversations.length = 0;
        conversations.push(...keep);
      }
      return { ok: true, dropped };
    }
    let oldest = -1;
    keep.forEach((c, i) => {
      if (c.id !== currentId && (oldest < 0 || c.updated < keep[oldest].updated)) oldest = i;
    });
    if (oldest < 0) return { ok: false, dropped };
    keep.splice(oldest, 1);
    dropped++;
  }
}
