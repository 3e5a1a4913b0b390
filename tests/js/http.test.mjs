// A real HTTP round trip for the LLM modes: mock OpenAI-compatible (SSE) and
// Anthropic (event stream) servers on 127.0.0.1, the fetch-based summarizers of
// examples/summarizers.mjs (docs/llm-modes.md's), corpus sessions in every format, from
// Node and from headless Chromium; plus a server that answers 500 and one that hangs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { compact } from "../../pkg/node.js";
import { anthropicSummarizer, openAISummarizer } from "../../examples/summarizers.mjs";
import { checkRules } from "./rules.mjs";

const root = new URL("../../", import.meta.url);
const corpus = new URL("../shared/corpus/", root);
const hasCorpus = existsSync(corpus) || Boolean(process.env.REQUIRE_CORPUS); // REQUIRE_CORPUS: fail, not skip
const HEADINGS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps", "## Critical Context"];
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** The summary the mock model writes: the template, naming what it was sent. */
function summaryFor(body) {
  return HEADINGS.map((h) => (h === "## Goal" ? `${h}\nFix the bug (summarized ${body.messages.length} messages — naïve ✓)` : h === "## Progress" ? h : `${h}\n(none)`)).join("\n");
}

/** Writes `text` as SSE events in pieces cut at odd byte offsets (inside characters and lines). */
async function stream(res, events) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const bytes = Buffer.from(events.join(""));
  for (let i = 0; i < bytes.length; i += 37) {
    res.write(bytes.subarray(i, i + 37));
    if (i % 370 === 0) await new Promise((r) => setTimeout(r, 1));
  }
  res.end();
}

const sse = (data, event) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

let server;
let origin;
const seen = []; // {path, body}
const closedWhileHanging = [];

function reply400(res, why) {
  res.writeHead(400, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message: why } }));
}

async function handle(req, res) {
  res.setHeader("access-control-allow-origin", "*");
  res.setHeader("access-control-allow-headers", "*");
  if (req.method === "OPTIONS") return res.writeHead(204).end();
  const path = new URL(req.url, "http://x").pathname;
  if (req.method === "GET") return serveFile(path, res);
  let raw = "";
  for await (const chunk of req) raw += chunk;
  const body = JSON.parse(raw);
  seen.push({ path, body });
  if (path.startsWith("/fail/")) {
    res.writeHead(500, { "content-type": "application/json" });
    return res.end(JSON.stringify({ error: { message: "the model is overloaded" } }));
  }
  if (path.startsWith("/hang/")) {
    req.socket.on("close", () => closedWhileHanging.push(path));
    return; // never answers
  }
  const text = summaryFor(body);
  const pieces = text.match(/[\s\S]{1,23}/g);
  if (path.endsWith("/chat/completions")) {
    try {
      assert.equal(body.messages[0].role, "system");
      assert.equal(body.stream, true);
      checkRules("openai", body.messages);
    } catch (e) {
      return reply400(res, e.message);
    }
    return stream(res, [
      ...pieces.map((p) => sse({ choices: [{ index: 0, delta: { content: p } }] })),
      sse({ choices: [], usage: { prompt_tokens: 1234, completion_tokens: 567, total_tokens: 1801 } }),
      "data: [DONE]\n\n",
    ]);
  }
  if (path.endsWith("/v1/messages")) {
    try {
      assert.equal(typeof body.system, "string");
      assert.ok(body.messages.every((m) => m.role === "user" || m.role === "assistant"));
      checkRules("anthropic", body.messages);
      assert.equal(req.headers["anthropic-version"], "2023-06-01");
    } catch (e) {
      return reply400(res, e.message);
    }
    return stream(res, [
      sse({ type: "message_start", message: { usage: { input_tokens: 1234, output_tokens: 1 } } }, "message_start"),
      sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start"),
      ...pieces.map((p) => sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } }, "content_block_delta")),
      sse({ type: "content_block_stop", index: 0 }, "content_block_stop"),
      sse({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 567 } }, "message_delta"),
      sse({ type: "message_stop" }, "message_stop"),
    ]);
  }
  reply400(res, `unknown path ${path}`);
}

const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json", ".html": "text/html" };

/** The page, the built package, the examples and the corpus, for the browser. */
function serveFile(path, res) {
  if (path === "/") {
    res.writeHead(200, { "content-type": "text/html" });
    return res.end("<!doctype html><title>http round trip</title>");
  }
  const [, top, ...rest] = path.split("/");
  const dirs = { pkg: new URL("pkg/", root), examples: new URL("examples/", root), corpus };
  const file = dirs[top] && new URL(rest.join("/"), dirs[top]);
  if (!file || rest.some((p) => p === "..") || !existsSync(file)) return res.writeHead(404).end();
  res.writeHead(200, { "content-type": TYPES[extname(fileURLToPath(file))] ?? "application/octet-stream" });
  res.end(readFileSync(file));
}

before(async () => {
  server = createServer((req, res) => handle(req, res).catch((e) => res.writeHead(500).end(String(e))));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const SESSIONS = ["5558c6aa", "c1f62324"];
const summarizerFor = (format, base = "ok") =>
  format === "anthropic" ? anthropicSummarizer({ apiKey: "test", baseURL: `${origin}/${base}` }) : openAISummarizer({ apiKey: "test", baseURL: `${origin}/${base}/v1` });

test("corpus sessions in every format, summarized over HTTP with streaming", { skip: !hasCorpus && "../shared/corpus is not there" }, async () => {
  for (const id of SESSIONS) {
    for (const format of ["openai", "anthropic", "moltis"]) {
      const input = JSON.parse(readFileSync(new URL(`swecontext-${id}.${format}.json`, corpus), "utf8"));
      for (const mode of ["structured", "llm_replace"]) {
        const r = await compact(input, { mode, contextWindow: 16000, summarize: summarizerFor(format) });
        const what = `${id}.${format} ${mode}`;
        assert.equal(r.notice.mode, mode, `${what}: ${r.notice.fallback?.reason}`);
        assert.match(r.summary, /^## Goal\nFix the bug \(summarized \d+ messages — naïve ✓\)/, what);
        assert.match(r.notice.text, /Used 1801 tokens \(1234 in \+ 567 out\)/, what);
        assert.equal(r.notice.usageEstimated, undefined, what);
        checkRules(format, r.messages);
        assert.ok(r.notice.tokensAfter < r.notice.tokensBefore, what);
      }
    }
  }
  assert.ok(seen.some((s) => s.path === "/ok/v1/messages") && seen.some((s) => s.path === "/ok/v1/chat/completions"));
});

test("a server error falls back (structured) or fails with the cause (llm_replace)", async () => {
  const input = JSON.parse(readFileSync(new URL("examples/data/tau-bench-airline-3.json", root), "utf8"));
  const r = await compact(input, { mode: "structured", contextWindow: 8000, summarize: summarizerFor("openai", "fail") });
  assert.equal(r.notice.mode, "recency_preserving");
  assert.equal(r.notice.fallback.code, "LLM_FAILED");
  assert.match(r.notice.fallback.reason, /HTTP 500 .*overloaded/);
  await assert.rejects(compact(input, { mode: "llm_replace", summarize: summarizerFor("openai", "fail") }), (e) => e.code === "LLM_FAILED" && /HTTP 500/.test(e.cause.message));
});

test("a server that hangs times out, falls back, and the request is aborted", async () => {
  const input = JSON.parse(readFileSync(new URL("examples/data/tau-bench-airline-3.json", root), "utf8"));
  const started = Date.now();
  const r = await compact(input, { mode: "structured", contextWindow: 8000, timeoutMs: 300, summarize: summarizerFor("openai", "hang") });
  assert.ok(Date.now() - started < 5000);
  assert.equal(r.notice.fallback.code, "TIMEOUT");
  await new Promise((res) => setTimeout(res, 100));
  assert.ok(closedWhileHanging.length > 0, "fetch was aborted, the connection closed");
});

test("the same round trips from headless Chromium", { skip: (!hasCorpus && "../shared/corpus is not there") || (!existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}`) }, async () => {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${origin}/`);
    const results = await page.evaluate(async ({ origin }) => {
      const { compact } = await import("/pkg/browser.js");
      const { openAISummarizer, anthropicSummarizer } = await import("/examples/summarizers.mjs");
      const out = {};
      for (const format of ["openai", "anthropic", "moltis"]) {
        const input = await (await fetch(`/corpus/swecontext-5558c6aa.${format}.json`)).json();
        const summarize = format === "anthropic" ? anthropicSummarizer({ apiKey: "k", baseURL: `${origin}/ok` }) : openAISummarizer({ apiKey: "k", baseURL: `${origin}/ok/v1` });
        const r = await compact(input, { mode: "structured", contextWindow: 16000, summarize });
        out[format] = { mode: r.notice.mode, text: r.notice.text, summary: r.summary, reason: r.notice.fallback?.reason };
      }
      const sample = await (await fetch("/corpus/swecontext-8c0be6e5.openai.json")).json();
      const failed = await compact(sample, { mode: "structured", contextWindow: 8000, summarize: openAISummarizer({ baseURL: `${origin}/fail/v1` }) });
      const hung = await compact(sample, { mode: "structured", contextWindow: 8000, timeoutMs: 300, summarize: openAISummarizer({ baseURL: `${origin}/hang/v1` }) });
      out.failed = failed.notice.fallback;
      out.hung = hung.notice.fallback;
      return out;
    }, { origin });
    for (const format of ["openai", "anthropic", "moltis"]) {
      assert.equal(results[format].mode, "structured", `${format}: ${results[format].reason}`);
      assert.match(results[format].summary, /^## Goal\nFix the bug/);
      assert.match(results[format].text, /Used 1801 tokens/);
    }
    assert.equal(results.failed.code, "LLM_FAILED");
    assert.equal(results.hung.code, "TIMEOUT");
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
