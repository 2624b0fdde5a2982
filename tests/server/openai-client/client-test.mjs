// The official `openai` npm client against a running inferd: completions, chat, streaming chat.
// Usage: node client-test.mjs PORT API_KEY   (exit 0 when every check passes)
import OpenAI from "openai";
import { check, finishChecks } from "./checks.mjs";

const [port, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey, maxRetries: 0 });

const models = await client.models.list();
check(models.data.length === 1 && typeof models.data[0].id === "string", "models.list");

const c = await client.completions.create({ model: models.data[0].id, prompt: "Hello", max_tokens: 5, temperature: 0 });
check(c.object === "text_completion" && c.choices.length === 1, "completion object");
check(typeof c.choices[0].text === "string" && c.choices[0].finish_reason === "length", "completion choice");
check(c.usage.completion_tokens === 5, "completion usage");

const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }];
const chat = await client.chat.completions.create({
  messages,
  max_tokens: 4, temperature: 0,
});
check(chat.object === "chat.completion" && chat.choices[0].message.role === "assistant", "chat object");
check(typeof chat.choices[0].message.content === "string", "chat content");

const stream = await client.chat.completions.create({
  messages, max_tokens: 4, temperature: 0, stream: true,
  stream_options: { include_usage: true },
});
let text = "", role = "", finish = null, usage = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  if (chunk.choices.length === 0) continue;
  const d = chunk.choices[0].delta;
  if (d.role) role = d.role;
  if (d.content) text += d.content;
  if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
}
check(role === "assistant", "stream role");
check(text === chat.choices[0].message.content, "stream text equals the plain text");
check(finish === "length", "stream finish_reason");
check(usage && usage.completion_tokens === 4, "stream usage");

try {
  await client.completions.create({ prompt: "x", temperature: 9 });
  check(false, "invalid temperature rejected");
} catch (e) {
  check(e.status === 400 && e.error && e.error.param === "temperature", "400 error object");
}
const noKey = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "wrong", maxRetries: 0 });
try {
  await noKey.models.list();
  check(false, "wrong key rejected");
} catch (e) {
  check(e.status === 401, "401 with a wrong key");
}

finishChecks("openai client: all checks passed");
