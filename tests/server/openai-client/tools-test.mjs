// Tool calls and reasoning through real clients against a running inferd that renders Qwen3's
// chat template: the official `openai` client with `tools` (whole and streamed) and the `ai`
// SDK's generateText with tools, all with tool_choice "required" or a named function (random
// weights + the grammar that forces the call give well-formed calls); the tool result sent back
// in the next request; reasoning_content split off (whole and streamed) and kept raw with
// reasoning_format "none".
// Usage: node tools-test.mjs PORT API_KEY   (exit 0 when every check passes)
import OpenAI from "openai";
import { z } from "zod";
import { generateText, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { check, attempt, finishChecks } from "./checks.mjs";

const [port, apiKey] = process.argv.slice(2);
const baseURL = `http://127.0.0.1:${port}/v1`;
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

// Bounded arguments: random weights wander in free strings.
const weatherParams = {
  type: "object",
  properties: {
    location: { type: "string", maxLength: 10 },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
  },
  required: ["location", "unit"],
  additionalProperties: false,
};
const tools = [
  { type: "function", function: { name: "get_weather", description: "Current weather", parameters: weatherParams } },
  { type: "function", function: { name: "get_time", description: "Local time",
    parameters: { type: "object", properties: { zone: { type: "string", enum: ["UTC", "CET"] } }, required: ["zone"] } } },
];
const messages = [{ role: "user", content: "What is the weather in Paris?" }];
const model = (await client.models.list()).data[0].id;
const base = { model, messages, tools, max_tokens: 300, temperature: 0, seed: 1 };

const validWeather = (args) =>
  typeof args.location === "string" && args.location.length <= 10 && ["celsius", "fahrenheit"].includes(args.unit);

let firstCall = null;
let firstPromptTokens = 0;
await attempt("openai tool call", async () => {
  const r = await client.chat.completions.create({
    ...base, tool_choice: { type: "function", function: { name: "get_weather" } }, parallel_tool_calls: false,
  });
  const m = r.choices[0].message;
  check(r.choices[0].finish_reason === "tool_calls", `finish_reason tool_calls (got ${r.choices[0].finish_reason})`);
  check(Array.isArray(m.tool_calls) && m.tool_calls.length === 1, `one tool call (got ${JSON.stringify(m)})`);
  const call = m.tool_calls[0];
  check(call.type === "function" && call.function.name === "get_weather", "the named function is called");
  check(typeof call.id === "string" && call.id.length > 0, "the call has an id");
  check(m.content === null || m.content === "", `no content beside the call (got ${JSON.stringify(m.content)})`);
  check(validWeather(JSON.parse(call.function.arguments)), `arguments follow the schema: ${call.function.arguments}`);
  firstCall = call;
  firstPromptTokens = r.usage.prompt_tokens;
});

await attempt("openai streamed tool calls", async () => {
  const stream = await client.chat.completions.create({ ...base, tool_choice: "required", stream: true });
  const calls = [];
  let finish = null, content = "";
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.finish_reason) finish = choice.finish_reason;
    if (choice.delta.content) content += choice.delta.content;
    for (const d of choice.delta.tool_calls || []) {
      check(Number.isInteger(d.index), "every tool call delta has an index");
      if (!calls[d.index]) {
        check(typeof d.id === "string" && d.id.length > 0 && d.type === "function" && d.function.name,
              `a call's first delta has its id, type and name: ${JSON.stringify(d)}`);
        calls[d.index] = { id: d.id, name: d.function.name, args: "" };
      } else {
        check(d.id === undefined && (!d.function || d.function.name === undefined), "later deltas only add arguments");
      }
      calls[d.index].args += (d.function && d.function.arguments) || "";
    }
  }
  check(finish === "tool_calls", `streamed finish_reason tool_calls (got ${finish})`);
  check(calls.length >= 1 && calls.every(Boolean), `streamed calls numbered 0, 1, … (got ${calls.length})`);
  check(content === "", `no streamed content beside the calls (got ${JSON.stringify(content)})`);
  check(new Set(calls.map((c) => c.id)).size === calls.length, "each streamed call has its own id");
  for (const c of calls) {
    const args = JSON.parse(c.args);
    check(c.name === "get_weather" ? validWeather(args) : ["UTC", "CET"].includes(args.zone),
          `streamed arguments follow ${c.name}'s schema: ${c.args}`);
  }
});

await attempt("tool result round trip", async () => {
  if (!firstCall) return check(false, "no call to answer");
  const result = JSON.stringify({ temperature: 22, condition: "sunny and warm with a light breeze from the west" });
  const r = await client.chat.completions.create({
    model, tools, max_tokens: 8, temperature: 0, seed: 1,
    messages: [...messages,
      { role: "assistant", content: null, tool_calls: [firstCall] },
      { role: "tool", tool_call_id: firstCall.id, content: result }],
  });
  check(typeof r.choices[0].message.content === "string", "an answer after the tool result");
  // The call and its result are in the prompt: it grew by more than the result's characters / 4.
  check(r.usage.prompt_tokens > firstPromptTokens + result.length / 4,
        `the tool result reaches the prompt (${r.usage.prompt_tokens} vs ${firstPromptTokens} tokens)`);
});

await attempt("openai tool_choice errors", async () => {
  try {
    await client.chat.completions.create({ ...base, tool_choice: { type: "function", function: { name: "nope" } } });
    check(false, "an unknown function in tool_choice is refused");
  } catch (e) {
    check(e.status === 400 && e.error && e.error.param === "tool_choice", `400 naming tool_choice (got ${e.status})`);
  }
});

await attempt("ai generateText with tools", async () => {
  const inferd = createOpenAICompatible({ name: "inferd", baseURL, apiKey });
  let executed = null;
  const result = await generateText({
    model: inferd(model), prompt: "What is the weather in Paris?", temperature: 0, seed: 1,
    maxOutputTokens: 300, maxRetries: 0, toolChoice: "required",
    tools: {
      get_weather: tool({
        description: "Current weather",
        inputSchema: z.object({ location: z.string().max(10), unit: z.enum(["celsius", "fahrenheit"]) }),
        execute: async (input) => { executed = input; return { temperature: 22 }; },
      }),
    },
  });
  check(result.toolCalls.length >= 1 && result.toolCalls[0].toolName === "get_weather",
        `ai: a get_weather call (got ${JSON.stringify(result.toolCalls)})`);
  check(executed !== null && validWeather(executed), `ai: the tool ran with valid input: ${JSON.stringify(executed)}`);
  check(result.finishReason === "tool-calls", `ai finishReason tool-calls (got ${result.finishReason})`);
});

// Qwen3 thinks inside <think>…</think>; a grammar makes the random model write such a block.
const thinking = 'root ::= "<think>" [a-z]{2,8} (" " [a-z]{2,8}){1,4} "</think>" [a-z]{2,8}';
await attempt("reasoning_content", async () => {
  const r = await client.chat.completions.create({ model, messages, max_tokens: 80, temperature: 0, grammar: thinking });
  const m = r.choices[0].message;
  check(typeof m.reasoning_content === "string" && /^[a-z]+( [a-z]+)+$/.test(m.reasoning_content),
        `reasoning_content holds the thinking (got ${JSON.stringify(m.reasoning_content)})`);
  check(/^[a-z]+$/.test(m.content), `content holds only the answer (got ${JSON.stringify(m.content)})`);
  const raw = await client.chat.completions.create({
    model, messages, max_tokens: 80, temperature: 0, grammar: thinking, reasoning_format: "none",
  });
  check(raw.choices[0].message.content === `<think>${m.reasoning_content}</think>${m.content}` &&
        raw.choices[0].message.reasoning_content === undefined,
        `reasoning_format none keeps the block in content (got ${JSON.stringify(raw.choices[0].message)})`);
  const stream = await client.chat.completions.create({
    model, messages, max_tokens: 80, temperature: 0, grammar: thinking, stream: true,
  });
  let reasoning = "", content = "";
  for await (const chunk of stream) {
    const d = chunk.choices[0] ? chunk.choices[0].delta : {};
    if (d.reasoning_content) reasoning += d.reasoning_content;
    if (d.content) content += d.content;
  }
  check(reasoning === m.reasoning_content && content === m.content,
        `streamed reasoning and content add up to the whole answer (got ${JSON.stringify([reasoning, content])})`);
});

finishChecks("tool-call and reasoning clients: all checks passed");
