// Embeddings through real clients against a running inferd serving tiny-bert (CLS pooling): the
// official `openai` client's embeddings.create (its default, which asks for base64 and decodes it;
// explicit float; explicit base64 decoded here) and LangChain's OpenAIEmbeddings, each compared
// with the reference embeddings by cosine similarity.
// Usage: node embeddings-test.mjs PORT API_KEY REFERENCE.emb.json   (exit 0 when every check passes)
import OpenAI from "openai";
import { OpenAIEmbeddings } from "@langchain/openai";
import { readFileSync } from "node:fs";
import { check, attempt, finishChecks } from "./checks.mjs";

const [port, apiKey, refPath] = process.argv.slice(2);
const baseURL = `http://127.0.0.1:${port}/v1`;
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const ref = JSON.parse(readFileSync(refPath, "utf8"));

const cosine = (a, b) => {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; ++i) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb);
};
const norm = (a) => Math.sqrt(a.reduce((s, x) => s + x * x, 0));
const inputs = ref.inputs.filter((i) => i.embedding !== null);
const texts = inputs.map((i) => i.text);
const nTokens = inputs.reduce((s, i) => s + i.tokens.length, 0);
const model = (await client.models.list()).data[0].id;

// Every vector matches its reference (cosine >= 0.9999) and has unit length.
const checkVectors = (what, vectors, refs) => {
  check(vectors.length === refs.length, `${what}: ${refs.length} vectors (got ${vectors.length})`);
  vectors.forEach((v, i) => {
    const c = cosine(v, refs[i].embedding);
    check(v.length === ref.n_embd && c >= 0.9999, `${what}: input ${i} cosine ${c} (length ${v.length})`);
    check(Math.abs(norm(v) - 1) < 1e-5, `${what}: input ${i} is L2-normalized (norm ${norm(v)})`);
  });
};

let floats = null;
await attempt("openai default (base64 on the wire)", async () => {
  const r = await client.embeddings.create({ model, input: texts });
  check(r.object === "list" && r.model === model, "a list naming the model");
  check(r.usage.prompt_tokens === nTokens && r.usage.total_tokens === nTokens, `usage ${JSON.stringify(r.usage)} (want ${nTokens})`);
  check(r.data.every((d, i) => d.object === "embedding" && d.index === i), "data in input order with indices");
  checkVectors("openai default", r.data.map((d) => d.embedding), inputs);
});

await attempt("openai float", async () => {
  const r = await client.embeddings.create({ model, input: texts, encoding_format: "float" });
  floats = r.data.map((d) => d.embedding);
  checkVectors("openai float", floats, inputs);
  const one = await client.embeddings.create({ model, input: texts[0], encoding_format: "float" });
  check(one.data.length === 1 && cosine(one.data[0].embedding, floats[0]) > 0.999999,
        "one input alone gives what it gave in the batch");
});

await attempt("openai base64", async () => {
  const r = await client.embeddings.create({ model, input: texts, encoding_format: "base64" });
  const decoded = r.data.map((d) => {
    const buf = Buffer.from(d.embedding, "base64");
    return Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4));
  });
  checkVectors("openai base64", decoded, inputs);
  // The float form is the shortest text of each float32: rounded to float32 it is that value.
  if (floats) check(decoded.every((v, i) => v.every((x, k) => x === Math.fround(floats[i][k]))), "base64 and float carry the same floats");
});

await attempt("openai dimensions", async () => {
  const r = await client.embeddings.create({ model, input: texts[0], encoding_format: "float", dimensions: 32 });
  const v = r.data[0].embedding;
  check(v.length === 32 && Math.abs(norm(v) - 1) < 1e-5, `32 dimensions, renormalized (${v.length}, norm ${norm(v)})`);
  if (floats) check(cosine(v, floats[0].slice(0, 32)) > 0.99999, "the leading dimensions of the full vector");
});

await attempt("LangChain OpenAIEmbeddings", async () => {
  const lc = new OpenAIEmbeddings({ apiKey, model, configuration: { baseURL } });
  // LangChain may strip newlines from documents: compare the texts that have none.
  const plain = inputs.filter((i) => !/[\n\t]/.test(i.text) && i.text !== "");
  const docs = await lc.embedDocuments(plain.map((i) => i.text));
  checkVectors("LangChain embedDocuments", docs, plain);
  const q = await lc.embedQuery(plain[0].text);
  check(cosine(q, plain[0].embedding) >= 0.9999, "LangChain embedQuery");
});

finishChecks("embeddings clients: all checks passed");
