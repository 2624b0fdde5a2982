// The chat page shows a model's reasoning collapsed above its answer: Qwen3 (its own chat template)
// answers with a think block, held to a given text by a grammar through the page's custom request
// fields; the server splits it into reasoning_content and content, streamed.
//   node reasoning-test.mjs PORT
import { chromium } from "playwright-core";
import { check, attempt, finishChecks } from "./checks.mjs";

const [port] = process.argv.slice(2);
const REASONING = "The user greets me; I greet back.";
const ANSWER = "Hello there!";

const browser = await chromium.launch({
  executablePath: process.env.INFERD_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update"],
});
const page = await browser.newPage();
page.setDefaultTimeout(30000);
const problems = [];
page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));

await attempt("reasoning shown collapsed above the answer", async () => {
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => document.querySelector("#model-name").textContent.length > 0);
  const grammar = `root ::= ${JSON.stringify(`<think>\n${REASONING}\n</think>\n\n${ANSWER}`)}`;
  await page.click("#settings-button");
  await page.fill("#set-max-tokens", "100");
  await page.fill("#set-custom", JSON.stringify({ grammar }));
  await page.click("#settings-save");
  await page.fill("#prompt-input", "Hi");
  await page.click("#send");
  await page.waitForFunction(() => {
    const a = document.querySelector('#messages .msg[data-role="assistant"]');
    return a && a.dataset.streaming === "false";
  });
  const msg = page.locator('#messages .msg[data-role="assistant"]');
  const details = msg.locator("details.msg-reasoning");
  check(await details.count() === 1, "the reasoning has its own section");
  check(await details.evaluate((d) => !d.open), "the section is collapsed");
  check((await details.textContent()).includes(REASONING), "it holds the reasoning");
  check((await msg.locator(".msg-content").textContent()).trim() === ANSWER, "the answer is only the answer");
  await details.locator("summary").click();
  check(await details.evaluate((d) => d.open), "a click opens it");
});

for (const p of problems) check(false, p);
await browser.close();
finishChecks("reasoning in Chromium: all checks passed");
