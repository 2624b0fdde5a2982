// Structured output through real clients against a running inferd: the official `openai` client's
// chat.completions.parse with zodResponseFormat, and the `ai` SDK's generateObject over an
// OpenAI-compatible provider, each with a bounded zod schema (random weights wander in free
// strings); an unsupported schema comes back as a 400 through both.
// Usage: node structured-test.mjs PORT API_KEY   (exit 0 when every check passes)
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";
import { generateObject, APICallError } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { check, attempt, finishChecks } from "./checks.mjs";

const [port, apiKey] = process.argv.slice(2);
const baseURL = `http://127.0.0.1:${port}/v1`;
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

const Person = z.object({
  name: z.string().max(12),
  mood: z.enum(["happy", "sad", "calm"]),
  age: z.number().int().min(0).max(120),
  tags: z.array(z.string().max(6)).max(3),
  score: z.number().int().min(-5).max(10),  // a fraction's digits have no bound: integers only
  ok: z.boolean(),
});
// multipleOf constrains values in a way no grammar enforces: the server refuses the schema.
const Unsupported = z.object({ n: z.number().multipleOf(0.3) });

const messages = [{ role: "user", content: "Describe a person." }];
const model = (await client.models.list()).data[0].id;
// openai v4 has parse under beta; v5 and later under chat.completions.
const completions = client.chat.completions.parse ? client.chat.completions : client.beta.chat.completions;

await attempt("openai parse", async () => {
  const r = await completions.parse({
    model, messages, max_tokens: 400, temperature: 0, seed: 1,
    response_format: zodResponseFormat(Person, "person"),
  });
  const parsed = r.choices[0].message.parsed;
  check(parsed !== null && Person.safeParse(parsed).success, `openai parsed object: ${JSON.stringify(parsed)}`);
  check(r.choices[0].finish_reason === "stop", "openai finish_reason stop");
});

await attempt("openai unsupported schema", async () => {
  try {
    await completions.parse({
      model, messages, max_tokens: 50, response_format: zodResponseFormat(Unsupported, "bad"),
    });
    check(false, "openai: an unsupported schema is refused");
  } catch (e) {
    check(e.status === 400 && e.error && e.error.param === "response_format" && /multipleOf/.test(e.error.message),
          `openai: 400 naming response_format and multipleOf (got ${e.status}: ${e.message})`);
  }
});

const inferd = createOpenAICompatible({ name: "inferd", baseURL, apiKey, supportsStructuredOutputs: true });

await attempt("ai generateObject", async () => {
  const { object, finishReason } = await generateObject({
    model: inferd(model), schema: Person, prompt: "Describe a person.",
    temperature: 0, seed: 1, maxOutputTokens: 400, maxRetries: 0,
  });
  check(Person.safeParse(object).success, `ai object: ${JSON.stringify(object)}`);
  check(finishReason === "stop", `ai finishReason stop (got ${finishReason})`);
});

await attempt("ai unsupported schema", async () => {
  try {
    await generateObject({
      model: inferd(model), schema: Unsupported, prompt: "A number.", maxOutputTokens: 50, maxRetries: 0,
    });
    check(false, "ai: an unsupported schema is refused");
  } catch (e) {
    check(APICallError.isInstance(e) && e.statusCode === 400 && /multipleOf/.test(e.responseBody || ""),
          `ai: APICallError 400 naming multipleOf (got ${e.name}: ${e.message})`);
  }
});

finishChecks("structured output clients: all checks passed");
