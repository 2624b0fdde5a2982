// The chat page in headless Chromium (Debian's, driven by playwright-core over the DevTools
// protocol) against the real inferd started with an API key:
//   node browser-test.mjs PORT KEY SCREENSHOT_DIR
// It enters the key the page asks for, sends a message and sees the answer stream in, stops a long
// generation (and the server's running count drops to 0), regenerates, edits and resends, renders
// a Markdown answer, reloads and finds the conversation, checks that a model answer holding HTML
// is shown as text (answers with given text are the real model's, held to that text by a grammar
// through the page's custom request fields), and saves screenshots at desktop and phone widths
// (phone also in dark mode). No console error and no CSP report may appear.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { check, attempt, finishChecks } from "./checks.mjs";

const [port, key, shots] = process.argv.slice(2);
const base = `http://127.0.0.1:${port}`;
const HOSTILE = "<img src=x onerror=alert(1)>";
mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.INFERD_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
const page = await context.newPage();
page.setDefaultTimeout(30000);
const problems = [];
// The page's first request learns that a key is needed: Chromium reports that 401 as a console
// error, which is expected; every other console error is a failure.
page.on("console", (m) => {
  if (m.type() === "error" && !/status of 401/.test(m.text())) problems.push(`console: ${m.text()}`);
});
page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
page.on("dialog", async (d) => { problems.push(`a dialog opened: ${d.message()}`); await d.dismiss(); });

const runningOnServer = async () => {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = text.match(/^inferd_requests_running (\S+)$/m);
  return m ? Number(m[1]) : NaN;
};
const assistants = () => page.locator('#messages .msg[data-role="assistant"]');
const lastAssistant = () => assistants().last();
const waitDone = async () => {
  await page.waitForFunction(() => {
    const all = document.querySelectorAll('#messages .msg[data-role="assistant"]');
    return all.length > 0 && all[all.length - 1].dataset.streaming === "false";
  }, null, { timeout: 120000 });
};

// Settings through the dialog; only the fields given are changed.
const setSettings = async (fields) => {
  if (!(await page.locator("dialog#settings").evaluate((d) => d.open))) await page.click("#settings-button");
  for (const [id, value] of Object.entries(fields)) await page.fill(id, value);
  await page.click("#settings-save");
  await page.waitForFunction(() => !document.querySelector("dialog#settings").open);
};

// Sends text and records every length the answer's text takes while it streams.
const sendAndWatch = async (text) => {
  const before = await assistants().count();
  await page.evaluate(() => {
    window.__lengths = [];
    const seen = () => {
      const all = document.querySelectorAll('#messages .msg[data-role="assistant"] .msg-content');
      const last = all[all.length - 1];
      if (last) window.__lengths.push(last.textContent.length);
    };
    window.__observer?.disconnect();
    window.__observer = new MutationObserver(seen);
    window.__observer.observe(document.querySelector("#messages"), { subtree: true, childList: true, characterData: true });
  });
  await page.fill("#prompt-input", text);
  await page.click("#send");
  await page.waitForFunction((n) => document.querySelectorAll('#messages .msg[data-role="assistant"]').length > n, before);
};

await attempt("the page loads and asks for the API key", async () => {
  const r = await page.goto(`${base}/`);
  check(r.status() === 200, "GET / answers 200");
  check((r.headers()["content-security-policy"] || "").includes("script-src 'self'"), "the page has its CSP");
  await page.waitForFunction(() => document.querySelector("dialog#settings").open);
  await setSettings({ "#set-api-key": key, "#set-max-tokens": "48", "#set-temperature": "0.8" });
  await page.waitForFunction(() => document.querySelector("#model-name").textContent.includes("tiny"));
  const ctx = await page.textContent("#model-ctx");
  check(/4096|4,096|4\.1k|4k/i.test(ctx), `the context size is shown (${ctx})`);
});

await attempt("a message streams its answer", async () => {
  await sendAndWatch("Hello! Tell me a story.");
  await waitDone();
  const lengths = await page.evaluate(() => window.__lengths);
  const distinct = new Set(lengths.filter((n) => n > 0));
  check(distinct.size >= 2, `the answer arrived in pieces (lengths seen: ${[...distinct].slice(0, 10)})`);
  const answer = await lastAssistant().locator(".msg-content").textContent();
  check(answer.trim().length > 0, "the answer has text");
  const stats = await lastAssistant().locator(".msg-stats").textContent();
  check(/tokens\/s/.test(stats) && /TTFT/.test(stats), `tokens/s and TTFT under the answer (${stats})`);
  check(await page.locator('#messages .msg[data-role="user"] .msg-content').first().textContent() === "Hello! Tell me a story.",
        "the user's message is shown as sent");
});

await attempt("stop ends a long generation on the server", async () => {
  await setSettings({ "#set-max-tokens": "3500", "#set-custom": '{"ignore_eos": true}' });
  await sendAndWatch("Write a very long poem.");
  await page.waitForFunction(() => {
    const all = document.querySelectorAll('#messages .msg[data-role="assistant"] .msg-content');
    return all[all.length - 1].textContent.length > 20;
  });
  check(await page.isVisible("#stop"), "the stop button shows while generating");
  await page.click("#stop");
  await waitDone();
  check(await lastAssistant().getAttribute("data-stopped") === "true", "the answer is marked stopped");
  check(await page.isHidden("#stop"), "the stop button is hidden again");
  let running = NaN;
  for (let i = 0; i < 50; i++) {
    running = await runningOnServer();
    if (running === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  check(running === 0, `the server stopped generating (inferd_requests_running ${running})`);
  await setSettings({ "#set-max-tokens": "48", "#set-custom": "{}" });
});

await attempt("regenerate and edit-and-resend", async () => {
  const n = await assistants().count();
  await lastAssistant().locator(".msg-regenerate").click();
  await waitDone();
  check(await assistants().count() === n, "regenerate replaces the last answer");
  check(await lastAssistant().getAttribute("data-stopped") !== "true", "the regenerated answer ran to its end");
  const users = page.locator('#messages .msg[data-role="user"]');
  await users.last().locator(".msg-edit").click();
  await page.fill(".msg-edit-input", "A shorter question?");
  await page.click(".msg-edit-send");
  await page.waitForFunction(() => document.querySelectorAll('#messages .msg[data-role="assistant"]').length > 0);
  await waitDone();
  check(await users.last().locator(".msg-content").textContent() === "A shorter question?", "the edited message was resent");
  check(await users.count() === 2 && await assistants().count() === 2, "editing dropped what followed the message");
});

await attempt("Markdown in an answer: code block with a copy button, emphasis, inline code", async () => {
  const answer = 'Here is a **Python** example:\n\n```python\ndef greet(name):\n    return f"Hello, {name}!"\n```\n\n' +
                 'Call `greet("world")` to try it.';
  await setSettings({ "#set-max-tokens": "200", "#set-custom": JSON.stringify({ grammar: `root ::= ${JSON.stringify(answer)}` }) });
  await sendAndWatch("Show me some Python.");
  await waitDone();
  const last = lastAssistant();
  check((await last.locator(".code-block pre code").textContent()).includes('return f"Hello, {name}!"'),
        "the fenced code is in a code block");
  check(await last.locator(".code-block .code-copy").count() === 1, "the code block has a copy button");
  await last.locator(".code-block .code-copy").click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  check(copied === 'def greet(name):\n    return f"Hello, {name}!"', `the copy button copies the code (${JSON.stringify(copied)})`);
  check(await last.locator("strong").textContent() === "Python", "**Python** is strong");
  check((await last.locator(":not(pre) > code").textContent()) === 'greet("world")', "inline code");
  check(await last.getAttribute("data-stopped") !== "true" && !(await last.locator(".msg-stats").textContent()).includes("length"),
        "the answer ended where the grammar ends");
  await setSettings({ "#set-max-tokens": "48", "#set-custom": "{}" });
});

await attempt("a reload finds the conversation", async () => {
  const before = await page.locator("#messages .msg").count();
  await page.reload();
  await page.waitForFunction(() => document.querySelector("#model-name").textContent.includes("tiny"));
  check(await page.locator("#conversations .conv-item").count() >= 1, "the conversation is listed");
  check(await page.locator("#messages .msg").count() === before, "its messages are back");
  check((await page.locator('#messages .msg[data-role="user"] .msg-content').first().textContent()) ===
        "Hello! Tell me a story.", "with their text");
});

await attempt("a model answer holding HTML is shown as text", async () => {
  await page.click("#new-chat");
  const grammar = `root ::= ${JSON.stringify(HOSTILE)}`;
  await setSettings({ "#set-custom": JSON.stringify({ grammar }) });
  await sendAndWatch("Show me an image.");
  await waitDone();
  const shown = await lastAssistant().locator(".msg-content").textContent();
  check(shown.includes(HOSTILE), `the answer's text is shown literally (${JSON.stringify(shown)})`);
  check(await page.locator("#messages img").count() === 0, "no img element was made from it");
  check(await page.locator("#conversations .conv-item").count() >= 2, "the new chat is listed beside the first");
  await setSettings({ "#set-custom": "{}" });
});

await attempt("screenshots at desktop and phone widths", async () => {
  await page.locator("#conversations .conv-item", { hasText: "Hello" }).click();
  await page.waitForFunction(() => document.querySelectorAll("#messages .msg").length >= 4);
  await page.screenshot({ path: `${shots}/webui-desktop.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(600);  // the conversation list slides away at this width
  await page.screenshot({ path: `${shots}/webui-phone.png` });
  await page.emulateMedia({ colorScheme: "dark" });
  const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.screenshot({ path: `${shots}/webui-phone-dark.png` });
  await page.emulateMedia({ colorScheme: "light" });
  const light = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  check(dark !== light, `dark mode follows the system (${dark} vs ${light})`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `nothing wider than a phone's screen (${overflow} px too wide)`);
  check(await page.isVisible("#sidebar-toggle"), "the conversation list has a toggle on a phone");
});

await attempt("a conversation can be deleted", async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const n = await page.locator("#conversations .conv-item").count();
  await page.locator("#conversations .conv-item", { hasText: "Show me" }).locator(".conv-delete").click();
  await page.waitForFunction((k) => document.querySelectorAll("#conversations .conv-item").length === k - 1, n);
  await page.reload();
  await page.waitForFunction(() => document.querySelector("#model-name").textContent.includes("tiny"));
  check(await page.locator("#conversations .conv-item").count() === n - 1, "it stays deleted after a reload");
});

for (const p of problems) check(false, p);
await browser.close();
finishChecks("chat page in Chromium: all checks passed");
