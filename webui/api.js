// Access to the server's HTTP API: health, models and streamed chat completions.
// The SSE reader is a plain class so it can be used without a network.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

// Splits a byte stream of server-sent events into event payloads.
// Bytes may arrive cut anywhere, also inside a UTF-8 character or a line.
export class SseParser {
  constructor(onData) {
    this.onData = onData;
    this.decoder = new TextDecoder('utf-8');
    this.buffer = '';
    this.data = [];
  }

  push(bytes) {
    this.buffer += typeof bytes === 'string' ? bytes : this.decoder.decode(bytes, { stream: true });
    this.drain();
  }

  end() {
    this.buffer += this.decoder.decode();
    if (this.buffer) this.buffer += '\n';
    this.drain();
    this.dispatch();
  }

  drain() {
    let nl;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      let line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.line(line);
    }
  }

  line(line) {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line[0] === ':') return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'data') this.data.push(value);
  }

  dispatch() {
    if (!this.data.length) return;
    const payload = this.data.join('\n');
    this.data = [];
    this.onData(payload);
  }
}

function authHeaders(apiKey) {
  return apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
}

async function errorFrom(res) {
  let message = `${res.status} ${res.statusText || 'error'}`.trim();
  try {
    const text = await res.text();
    try {
      const body = JSON.parse(text);
      const m = body && (body.error?.message ?? body.message ?? (typeof body.error === 'string' ? body.error : null));
      if (m) message = String(m);
    } catch {
      if (text.trim()) message = text.trim().slice(0, 500);
    }
  } catch {
    // The body could not be read; the status line is all there is.
  }
  return new ApiError(res.status, message);
}

// Returns 'ok', 'loading' or throws (network error or unexpected status).
export async function getHealth() {
  const res = await fetch('health', { cache: 'no-store' });
  if (res.ok) return 'ok';
  if (res.status === 503) return 'loading';
  throw await errorFrom(res);
}

export async function getModels(apiKey) {
  const res = await fetch('v1/models', { headers: authHeaders(apiKey), cache: 'no-store' });
  if (!res.ok) throw await errorFrom(res);
  const body = await res.json();
  return Array.isArray(body?.data) ? body.data : [];
}

// Sends a chat completion request with stream: true and calls onChunk with
// each parsed JSON chunk. Resolves when the stream ends; rejects on HTTP
// errors, network errors and abort (an AbortError).
export async function streamChat({ body, apiKey, signal, onChunk }) {
  const res = await fetch('v1/chat/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...authHeaders(apiKey) },
    body: JSON.stringify(body),
    signal,
    cache: 'no-store',
  });
  if (!res.ok) throw await errorFrom(res);
  if (!res.body) throw new ApiError(0, 'The response has no body.');
  let done = false;
  const parser = new SseParser((data) => {
    if (done) return;
    if (data.trim() === '[DONE]') {
      done = true;
      return;
    }
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    onChunk(chunk);
  });
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      parser.push(value);
      if (done) break;
    }
    parser.end();
  } finally {
    if (done) reader.cancel().catch(() => {});
  }
}
