// The settings dialog: reads the form into a settings object, validates it
// and builds the request fields the settings contribute.

import { saveSettings } from './store.js';

const $ = (id) => document.getElementById(id);

const FIELDS = {
  system: 'set-system',
  temperature: 'set-temperature',
  topP: 'set-top-p',
  maxTokens: 'set-max-tokens',
  seed: 'set-seed',
  apiKey: 'set-api-key',
  custom: 'set-custom',
};

// Parses the custom request fields; returns { value } or { error }.
export function parseCustom(text) {
  const t = String(text ?? '').trim();
  if (!t) return { value: {} };
  let value;
  try {
    value = JSON.parse(t);
  } catch (e) {
    return { error: `Custom request fields: not valid JSON (${e.message}).` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { error: 'Custom request fields must be a JSON object, like {"top_k": 40}.' };
  }
  return { value };
}

function numberField(id, label, { min, max, integer }) {
  const input = $(id);
  if (input.validity?.badInput) return { error: `${label} must be a number.` };
  const raw = input.value.trim();
  if (raw === '') return { value: null };
  const n = Number(raw);
  if (!Number.isFinite(n)) return { error: `${label} must be a number.` };
  if (integer && !Number.isInteger(n)) return { error: `${label} must be a whole number.` };
  if (min != null && n < min) return { error: `${label} must be at least ${min}.` };
  if (max != null && n > max) return { error: `${label} must be at most ${max}.` };
  return { value: n };
}

function readForm() {
  const checks = {
    temperature: numberField(FIELDS.temperature, 'Temperature', { min: 0, max: 5 }),
    topP: numberField(FIELDS.topP, 'Top-p', { min: 0, max: 1 }),
    maxTokens: numberField(FIELDS.maxTokens, 'Max tokens', { min: 1, integer: true }),
    seed: numberField(FIELDS.seed, 'Seed', { integer: true }),
  };
  const out = { system: $(FIELDS.system).value, apiKey: $(FIELDS.apiKey).value.trim(), custom: $(FIELDS.custom).value };
  for (const [key, r] of Object.entries(checks)) {
    if (r.error) return { error: r.error, field: FIELDS[key] };
    out[key] = r.value;
  }
  const custom = parseCustom(out.custom);
  if (custom.error) return { error: custom.error, field: FIELDS.custom };
  return { value: out };
}

// Request body fields that come from the settings (custom fields last).
export function requestFields(settings) {
  const body = {};
  if (settings.temperature != null) body.temperature = settings.temperature;
  if (settings.topP != null) body.top_p = settings.topP;
  if (settings.maxTokens != null) body.max_tokens = settings.maxTokens;
  if (settings.seed != null) body.seed = settings.seed;
  const custom = parseCustom(settings.custom);
  return { ...body, ...(custom.value || {}) };
}

export class SettingsDialog {
  constructor(settings, { onSave }) {
    this.settings = settings;
    this.onSave = onSave;
    this.dialog = $('settings');
    this.error = $('settings-error');
    this.note = $('settings-note');
    $('settings-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.save();
    });
    $('settings-cancel').addEventListener('click', () => this.dialog.close());
    this.dialog.addEventListener('close', () => {
      this.note.hidden = true;
      this.setError('');
    });
    $(FIELDS.custom).addEventListener('input', () => {
      const r = parseCustom($(FIELDS.custom).value);
      $(FIELDS.custom).setAttribute('aria-invalid', r.error ? 'true' : 'false');
    });
  }

  setError(text, fieldId) {
    this.error.textContent = text;
    this.error.hidden = !text;
    for (const id of Object.values(FIELDS)) $(id).removeAttribute('aria-invalid');
    if (fieldId) {
      $(fieldId).setAttribute('aria-invalid', 'true');
      $(fieldId).focus();
    }
  }

  fill() {
    const s = this.settings;
    $(FIELDS.system).value = s.system || '';
    $(FIELDS.temperature).value = s.temperature ?? '';
    $(FIELDS.topP).value = s.topP ?? '';
    $(FIELDS.maxTokens).value = s.maxTokens ?? '';
    $(FIELDS.seed).value = s.seed ?? '';
    $(FIELDS.apiKey).value = s.apiKey || '';
    $(FIELDS.custom).value = s.custom || '';
  }

  // Opens the dialog; `message` is shown above the fields (e.g. key needed).
  open(message, focusId) {
    this.fill();
    this.setError('');
    this.note.textContent = message || '';
    this.note.hidden = !message;
    if (!this.dialog.open) this.dialog.showModal();
    $(focusId || FIELDS.system).focus();
  }

  save() {
    const r = readForm();
    if (r.error) {
      this.setError(r.error, r.field);
      return;
    }
    Object.assign(this.settings, r.value);
    const stored = saveSettings(this.settings);
    this.dialog.close();
    this.onSave(this.settings, stored);
  }
}
