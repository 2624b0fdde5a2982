// The official `openai` npm client over HTTPS against inferd with a self-signed certificate
// (trusted through NODE_EXTRA_CA_CERTS): models, a completion and a streamed chat answer.
// Usage: NODE_EXTRA_CA_CERTS=cert.pem node tls-test.mjs PORT API_KEY   (exit 0 when every check passes)
import OpenAI from "openai";
import { check, finishChecks } from "./checks.mjs";

const [port, apiKey] = process.argv.slice(2);
const base = `https://127.0.0.1:${port}`;

// The model may still be loading: /health answers 503 until it is ready.
let ready = false;
for (let i = 0; i < 600 && !ready; ++i) {
  try {
    ready = (await fetch(`${base}/health`)).status === 200;
  } catch (e) {
    if (i === 599) console.error("health:", e);
  }
  if (!ready) await new Promise((r) => setTimeout(r, 100));
}
check(ready, "GET /health over https");

const client = new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0 });
const models = await client.models.list();
check(models.data.length === 1, "models.list over https");
const c = await client.completions.create({ model: models.data[0].id, prompt: "Hello", max_tokens: 5, temperature: 0 });
check(c.choices[0].finish_reason === "length" && c.usage.completion_tokens === 5, "completion over https");
const stream = await client.chat.completions.create({
  messages: [{ role: "user", content: "Hi" }], max_tokens: 6, temperature: 0, stream: true,
});
let text = "", finish = null;
for await (const chunk of stream) {
  if (chunk.choices.length === 0) continue;
  text += chunk.choices[0].delta.content ?? "";
  if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
}
check(finish === "length" && text.length > 0, "streamed chat over https");
finishChecks("tls: all checks passed");
