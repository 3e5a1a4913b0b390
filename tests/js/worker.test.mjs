// The Cloudflare Worker proxy of examples/worker/, run for real: the packed tarball
// installed into a copy of the example, bundled by `wrangler deploy --dry-run` from
// its wrangler.jsonc, served by workerd (the runtime Cloudflare runs) against a mock
// upstream on 127.0.0.1 that records what it receives.
//
//   node --test tests/js/worker.test.mjs
//
// Needs pkg/ (bash scripts/build.sh) and the root devDependencies (wrangler, workerd,
// esbuild). CHAT_COMPACTION_PKG_DIR tests another built package.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import { request as conversation } from "../../examples/worker/bench/conversation.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const example = join(root, "examples/worker");
const builtPkg = resolve(process.env.CHAT_COMPACTION_PKG_DIR || join(root, "pkg"));
const WORKERD = join(root, "node_modules/.bin/workerd");
const WRANGLER = join(root, "node_modules/wrangler/bin/wrangler.js");
const ESBUILD = join(root, "node_modules/.bin/esbuild");
const UPSTREAM_KEY = "sk-upstream-test";
const HEADER = "x-chat-compaction";
const NOTICE = /^mode=(recency_preserving|deterministic); tokens=(\d+)->(\d+); messages=(\d+)->(\d+); window=(\d+); reserved=(\d+)$/;
const UNTOUCHED = /^mode=none; tokens=(\d+); messages=(\d+); window=(\d+); reserved=(\d+)$/;

let lib; // the built package, to validate and measure what reached the upstream
let work;
let app;
let workerd;
let workerdExit;
const ports = {};

function run(cmd, argv, options = {}) {
  const r = spawnSync(cmd, argv, { encoding: "utf8", timeout: 120_000, maxBuffer: 64 << 20, ...options, env: { ...process.env, ...options.env } });
  if (r.error || r.status !== 0) {
    throw new Error(`${cmd} ${argv.join(" ")}: ${r.error?.message ?? `exit ${r.status}`}\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

// ---------------------------------------------------------------------------------------
// the mock upstream: records every request; `respond` answers the next one

const received = [];
let respond;

const upstream = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const entry = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) };
    received.push(entry);
    const handler = respond ?? defaultAnswer;
    respond = undefined;
    Promise.resolve(handler(req, res, entry)).catch((e) => {
      res.destroy(e);
    });
  });
});

function defaultAnswer(req, res) {
  res.writeHead(200, { "content-type": "application/json", "x-upstream": "mock" });
  res.end(JSON.stringify({ id: "mock-1", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "ok" } }] }));
}

/** The requests the mock got during `fn`. */
async function upstreamSees(fn) {
  const from = received.length;
  const result = await fn();
  return { result, got: received.slice(from) };
}

// ---------------------------------------------------------------------------------------
// the client: node:http, so any header (host, proxy-*, keep-alive …) can be sent

/** Sends a request to one of the workerd sockets; resolves with status, headers and the body text. */
function send(socket, path, { method = "POST", headers = {}, body } = {}) {
  return new Promise((ok, fail) => {
    const req = httpRequest({ host: "127.0.0.1", port: ports[socket], path, method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json;
        try {
          json = JSON.parse(text);
        } catch {}
        ok({ status: res.statusCode, headers: res.headers, text, json });
      });
      res.on("error", fail);
    });
    req.on("error", fail);
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const JSON_TYPE = { "content-type": "application/json" };
const post = (socket, path, body, headers = {}) => send(socket, path, { body: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body), headers: { ...JSON_TYPE, ...headers } });

// ---------------------------------------------------------------------------------------
// setup: tarball → copy of the example → wrangler bundle → workerd serving four configs

/** One worker of the config: the wrangler bundle plus `vars` as text bindings. */
function workerConfig(name, modules, vars) {
  const bindings = Object.entries(vars).map(([k, v]) => `(name = ${JSON.stringify(k)}, text = ${JSON.stringify(v)})`);
  return `const ${name} :Workerd.Worker = (
  modules = [${modules}],
  compatibilityDate = "2025-09-01",
  bindings = [${bindings.join(", ")}],
  globalOutbound = "loopback",
);
`;
}

before(async () => {
  lib = await import(pathToFileURL(join(builtPkg, "node.js")).href);
  work = mkdtempSync(join(tmpdir(), "chat-compaction-worker-"));
  // The real tarball, from a snapshot of pkg/.
  cpSync(builtPkg, join(work, "pkg"), { recursive: true });
  const packed = JSON.parse(run("npm", ["pack", "--json", "--loglevel=error", "--pack-destination", work], { cwd: join(work, "pkg") }))[0];
  // The example as a user has it, with the tarball installed.
  app = join(work, "app");
  mkdirSync(app);
  for (const entry of ["src", "bench", "wrangler.jsonc"]) cpSync(join(example, entry), join(app, entry), { recursive: true });
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "worker-proxy-test", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", join(work, packed.filename)], { cwd: app });
  // Bundled by wrangler from the example's own wrangler.jsonc.
  const env = { WRANGLER_SEND_METRICS: "false", WRANGLER_LOG_PATH: join(work, "wrangler-logs"), NO_COLOR: "1", CI: "1" };
  run(process.execPath, [WRANGLER, "deploy", "--dry-run", "--outdir", "dist"], { cwd: app, env });
  const wasm = readdirSync(join(app, "dist")).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasm.length, 1, `one .wasm module from wrangler: ${readdirSync(join(app, "dist"))}`);

  await new Promise((ok) => upstream.listen(0, "127.0.0.1", ok));
  const mockUrl = `http://127.0.0.1:${upstream.address().port}`;
  // A port nothing listens on, for the unreachable upstream.
  const closed = createServer();
  await new Promise((ok) => closed.listen(0, "127.0.0.1", ok));
  const deadUrl = `http://127.0.0.1:${closed.address().port}`;
  await new Promise((ok) => closed.close(ok));

  const modules = `(name = "index.js", esModule = embed "dist/index.js"), (name = ${JSON.stringify(wasm[0])}, wasm = embed "dist/${wasm[0]}")`;
  const workers = {
    // The upstream key replaces the caller's credentials.
    proxy: { UPSTREAM_URL: mockUrl, UPSTREAM_KEY },
    // No key: the caller's credentials go through; the Anthropic API has its own base.
    plain: { UPSTREAM_URL: mockUrl, ANTHROPIC_UPSTREAM_URL: `${mockUrl}/anthropic/` },
    // A window from COMPACTION_OPTIONS (JSON text, as `wrangler secret` / vars give it).
    small: { UPSTREAM_URL: mockUrl, COMPACTION_OPTIONS: JSON.stringify({ contextWindow: 16000, mode: "deterministic" }) },
    // Room for the answer reserved by the proxy, not by the request.
    reserving: { UPSTREAM_URL: mockUrl, COMPACTION_OPTIONS: JSON.stringify({ reserveOutputTokens: 2000 }) },
    dead: { UPSTREAM_URL: deadUrl },
    unset: {},
  };
  const names = Object.keys(workers);
  writeFileSync(
    join(app, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${names.map((n) => `(name = "${n}", worker = .${n}Worker),`).join("\n    ")}
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [
    ${names.map((n) => `(name = "${n}", address = "127.0.0.1:0", http = (), service = "${n}"),`).join("\n    ")}
  ],
);
${names.map((n) => workerConfig(`${n}Worker`, modules, workers[n])).join("")}`,
  );

  workerd = spawn(WORKERD, ["serve", "config.capnp", "--control-fd=3"], { cwd: app, stdio: ["ignore", "pipe", "pipe", "pipe"] });
  let log = "";
  workerd.stdout.on("data", (c) => (log += c));
  workerd.stderr.on("data", (c) => (log += c));
  workerdExit = new Promise((ok) => workerd.on("exit", ok));
  await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`workerd did not listen in 30 s\n${log}`)), 30_000);
    workerd.on("exit", (code) => fail(new Error(`workerd exited (${code})\n${log}`)));
    createInterface({ input: workerd.stdio[3] }).on("line", (line) => {
      const event = JSON.parse(line);
      if (event.event === "listen") ports[event.socket] = event.port;
      if (names.every((n) => ports[n])) {
        clearTimeout(timer);
        ok();
      }
    });
  });
});

after(async () => {
  if (workerd && workerd.exitCode === null) {
    workerd.kill("SIGTERM");
    await workerdExit;
  }
  await new Promise((ok) => upstream.close(ok));
  upstream.closeAllConnections?.();
  if (work) rmSync(work, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------
// checks

function parseNotice(value) {
  const m = NOTICE.exec(value ?? "");
  assert.ok(m, `${HEADER}: ${value}`);
  const [, mode, before, after, messagesBefore, messagesAfter, window, reserved] = m;
  return { mode, before: +before, after: +after, messagesBefore: +messagesBefore, messagesAfter: +messagesAfter, window: +window, reserved: +reserved };
}

/** The upstream got a compacted request: valid, smaller, every other field as sent, and what the header says. */
function checkCompacted(sent, got, response, format, options = {}) {
  assert.equal(response.status, 200, response.text);
  assert.equal(got.length, 1, "one request upstream");
  const forwarded = JSON.parse(got[0].body.toString("utf8"));
  assert.equal(Number(got[0].headers["content-length"]), got[0].body.length, "content-length of the new body");
  const { violations } = lib.validate(forwarded, { format });
  assert.deepEqual(violations, [], "the compacted request breaks no provider rule");
  for (const key of Object.keys(sent)) {
    if (key !== "messages") assert.deepEqual(forwarded[key], sent[key], `${key} forwarded as sent`);
  }
  assert.deepEqual(Object.keys(forwarded), Object.keys(sent), "the same fields, in order");
  const notice = parseNotice(response.headers[HEADER]);
  const before = lib.measure(sent, { ...options, format });
  const afterwards = lib.measure(forwarded, { ...options, format });
  assert.equal(notice.before, before.tokens, "tokens before: measure of the request sent");
  assert.equal(notice.after, afterwards.tokens, "tokens after: measure of the request forwarded");
  assert.equal(notice.messagesBefore, sent.messages.length);
  assert.equal(notice.messagesAfter, forwarded.messages.length);
  assert.ok(forwarded.messages.length <= sent.messages.length && notice.after < notice.before, "smaller");
  assert.equal(notice.window, before.contextWindow);
  assert.equal(notice.reserved, before.reservedOutputTokens);
  assert.ok(notice.after + notice.reserved <= notice.window, `${notice.after} + ${notice.reserved} fits ${notice.window}`);
  return { forwarded, notice };
}

/** A 4xx/5xx JSON error in the endpoint's shape; returns its inner error object. */
function checkError(response, status, api = "openai") {
  assert.equal(response.status, status, response.text);
  assert.match(response.headers["content-type"], /^application\/json/);
  assert.ok(response.json, `JSON body: ${response.text}`);
  const inner = api === "anthropic" ? (assert.equal(response.json.type, "error"), response.json.error) : response.json.error;
  assert.equal(typeof inner?.message, "string", response.text);
  assert.ok(inner.message.length > 10);
  return inner;
}

const QUESTION = { role: "user", content: "Héllo — what is 2 + 2? 🧮" };
const small = (model = "gpt-4o") =>
  model.startsWith("claude") ? { model, system: "Be brief.", messages: [QUESTION], max_tokens: 50 } : { model, messages: [{ role: "system", content: "Be brief." }, QUESTION], max_tokens: 50 };

// ---------------------------------------------------------------------------------------

describe("worker proxy in workerd", () => {
  test("a request that fits is forwarded byte for byte, with the caller's headers", async () => {
    // Spacing, key order and escapes a re-serialization would change.
    const body = `{ "model":"gpt-4o",\n  "messages": [ {"role":"user","content":"caf\\u00e9 \\ud83e\\uddee  two  spaces"} ],\n "max_tokens" : 50, "stream":false }\n`;
    const { result: r, got } = await upstreamSees(() =>
      post("proxy", "/v1/chat/completions?api-version=1", body, {
        authorization: "Bearer caller-key",
        "x-api-key": "caller-key",
        "x-custom": "kept",
        "openai-organization": "org-1",
        "proxy-authorization": "Basic c2VjcmV0",
        "proxy-connection": "keep-alive",
        "keep-alive": "timeout=5",
        "cf-connecting-ip": "203.0.113.9",
        expect: "100-continue",
        host: "proxy.example.com",
      }),
    );
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.id, "mock-1");
    assert.equal(r.headers["x-upstream"], "mock", "upstream headers passed back");
    assert.equal(got.length, 1);
    const seen = got[0];
    assert.equal(seen.method, "POST");
    assert.equal(seen.url, "/v1/chat/completions?api-version=1", "path and query appended to UPSTREAM_URL");
    assert.ok(seen.body.equals(Buffer.from(body)), "byte-identical body upstream");
    assert.equal(seen.headers["content-length"], String(Buffer.byteLength(body)));
    assert.equal(seen.headers["x-custom"], "kept");
    assert.equal(seen.headers["openai-organization"], "org-1");
    assert.equal(seen.headers["content-type"], "application/json");
    assert.equal(seen.headers.authorization, `Bearer ${UPSTREAM_KEY}`, "UPSTREAM_KEY replaces the caller's key");
    assert.equal(seen.headers["x-api-key"], undefined);
    for (const h of ["proxy-authorization", "proxy-connection", "keep-alive", "cf-connecting-ip", "expect", "transfer-encoding"]) {
      assert.equal(seen.headers[h], undefined, `${h} not forwarded`);
    }
    assert.equal(seen.headers.host, `127.0.0.1:${upstream.address().port}`, "host is the upstream's");
    const m = UNTOUCHED.exec(r.headers[HEADER]);
    assert.ok(m, r.headers[HEADER]);
    assert.equal(+m[1], lib.measure(JSON.parse(body), { format: "openai" }).tokens);
    assert.deepEqual([+m[2], +m[3], +m[4]], [1, 128000, 50]);
  });

  test("without UPSTREAM_KEY the caller's credentials go through; Anthropic gets its own base URL", async () => {
    const { result: r, got } = await upstreamSees(() =>
      post("plain", "/v1/messages", small("claude-sonnet-4-5"), { "x-api-key": "caller-key", "anthropic-version": "2023-06-01", "anthropic-beta": "tools-2024" }),
    );
    assert.equal(r.status, 200, r.text);
    assert.equal(got[0].url, "/anthropic/v1/messages");
    assert.equal(got[0].headers["x-api-key"], "caller-key");
    assert.equal(got[0].headers["anthropic-version"], "2023-06-01");
    assert.equal(got[0].headers["anthropic-beta"], "tools-2024");
    const { got: got2 } = await upstreamSees(() => post("plain", "/v1/chat/completions", small(), { authorization: "Bearer caller-key" }));
    assert.equal(got2[0].url, "/v1/chat/completions");
    assert.equal(got2[0].headers.authorization, "Bearer caller-key");
  });

  test("an Anthropic request with UPSTREAM_KEY: x-api-key replaced, Authorization dropped", async () => {
    const { got } = await upstreamSees(() => post("proxy", "/v1/messages", small("claude-sonnet-4-5"), { authorization: "Bearer caller", "x-api-key": "caller" }));
    assert.equal(got[0].headers["x-api-key"], UPSTREAM_KEY);
    assert.equal(got[0].headers.authorization, undefined);
  });

  test("a 200K-token OpenAI request over gpt-4o's window is compacted (recency_preserving) and valid upstream", async () => {
    const sent = conversation("openai", 200_000);
    const text = JSON.stringify(sent);
    const { result: r, got } = await upstreamSees(() => post("proxy", "/v1/chat/completions", text, { "x-custom": "kept" }));
    const { notice } = checkCompacted(sent, got, r, "openai");
    assert.equal(notice.mode, "recency_preserving");
    assert.ok(notice.before > 190_000 && notice.before > notice.window, `${notice.before} tokens sent`);
    assert.equal(notice.window, 128_000);
    assert.equal(got[0].headers["x-custom"], "kept");
    assert.equal(got[0].headers.authorization, `Bearer ${UPSTREAM_KEY}`);
  });

  test("a 200K-token Anthropic request (system, tools, max_tokens) over Claude's window is compacted and valid", async () => {
    const sent = conversation("anthropic", 200_000);
    const { result: r, got } = await upstreamSees(() => post("proxy", "/v1/messages", sent, { "anthropic-version": "2023-06-01" }));
    const { forwarded, notice } = checkCompacted(sent, got, r, "anthropic");
    assert.equal(notice.mode, "recency_preserving");
    assert.equal(notice.window, 200_000);
    assert.equal(notice.reserved, 8192);
    assert.equal(forwarded.system, sent.system);
    assert.equal(got[0].headers["anthropic-version"], "2023-06-01");
  });

  test("a pasted document over the window, with nothing to leave out, is cut in the middle; the newest request kept verbatim", async () => {
    // A pasted document in the head: head and tail cover everything, nothing to prune.
    const doc = Array.from({ length: 4000 }, (_, i) => `Clause ${i}: the tenant shall keep item ${i} in good order.`).join("\n");
    const question = { role: "user", content: "Which clause mentions item 42?" };
    const sent = { model: "gpt-4", max_tokens: 1000, messages: [{ role: "system", content: "You are a lawyer." }, { role: "user", content: `The contract:\n${doc}` }, { role: "assistant", content: "I have read it." }, question] };
    const local = lib.compactSync(sent, { mode: "recency_preserving" });
    assert.ok(local.notice.fits && local.warnings.some((w) => w.code === "TEXTS_SHORTENED"), JSON.stringify(local.warnings));
    const { result: r, got } = await upstreamSees(() => post("proxy", "/v1/chat/completions", sent));
    const { forwarded, notice } = checkCompacted(sent, got, r, "openai");
    assert.equal(notice.mode, "recency_preserving");
    assert.deepEqual([notice.window, notice.reserved], [8192, 1000]);
    assert.deepEqual(forwarded.messages[0], sent.messages[0], "the system message kept");
    assert.ok(
      forwarded.messages.some((m) => JSON.stringify(m) === JSON.stringify(question)),
      "the newest request forwarded verbatim",
    );
  });

  test("COMPACTION_OPTIONS from the environment set the window and the mode", async () => {
    const sent = conversation("anthropic", 20_000);
    const { result: r, got } = await upstreamSees(() => post("small", "/v1/messages", sent));
    const { notice, forwarded } = checkCompacted(sent, got, r, "anthropic", { contextWindow: 16_000 });
    assert.equal(notice.mode, "deterministic");
    assert.equal(notice.window, 16_000);
    // (Anthropic turns alternate: the summary is merged into the request's message, before its text)
    const last = forwarded.messages.at(-1);
    assert.ok(last.content[0].text.startsWith("[Conversation Summary]"));
    assert.deepEqual(last.content.at(-1), { type: "text", text: sent.messages.at(-1).content }, "the closing request kept whole, after the summary");
  });

  test("a request that cannot fit is answered 413 with the numbers, and not forwarded", async () => {
    // The newest message alone is larger than gpt-4's window.
    const words = Array.from({ length: 9000 }, (_, i) => `word${i}`).join(" ");
    const sent = { model: "gpt-4", max_tokens: 1000, messages: [...conversation("openai", 3000).messages, { role: "user", content: `Summarize: ${words}` }] };
    const { result: r, got } = await upstreamSees(() => post("proxy", "/v1/chat/completions", sent));
    assert.equal(got.length, 0, "nothing forwarded");
    const e = checkError(r, 413);
    assert.equal(e.code, "context_length_exceeded");
    assert.equal(e.context_window, 8192);
    assert.equal(e.reserved_output_tokens, 1000);
    assert.equal(e.tokens_before_compaction, lib.measure(sent, { format: "openai" }).tokens);
    assert.ok(e.tokens < e.tokens_before_compaction, "compaction was tried");
    assert.equal(e.over_by, e.tokens + e.reserved_output_tokens - e.context_window);
    assert.ok(e.over_by > 0);
    assert.ok(e.message.includes(`${e.over_by.toLocaleString("en-US")} more than the context window of 8,192`), e.message);
    assert.match(e.message, /even after compaction \(deterministic: /);
    const notice = parseNotice(r.headers[HEADER]);
    assert.equal(notice.after, e.tokens);
  });

  test("413 in Anthropic's error shape when max_tokens alone exceeds the window", async () => {
    const sent = { model: "claude-2.0", max_tokens: 150_000, messages: [{ role: "user", content: "Write a novel." }] };
    const { result: r, got } = await upstreamSees(() => post("proxy", "/v1/messages", sent));
    assert.equal(got.length, 0);
    const e = checkError(r, 413, "anthropic");
    assert.equal(e.type, "request_too_large");
    assert.equal(e.context_window, 100_000);
    assert.equal(e.reserved_output_tokens, 150_000);
    assert.equal(e.over_by, e.tokens + 150_000 - 100_000);
    assert.match(e.message, /compacting cannot make it smaller/);
    assert.match(r.headers[HEADER], UNTOUCHED);
  });

  test("a 413 advises lowering max_tokens only when the request's max_tokens reserved the room", async () => {
    const words = Array.from({ length: 9000 }, (_, i) => `word${i}`).join(" ");
    const huge = { role: "user", content: `Summarize: ${words}` };
    // Nothing reserved: no "+ 0 reserved", no max_tokens to lower.
    const none = checkError(await post("proxy", "/v1/chat/completions", { model: "gpt-4", messages: [huge] }), 413);
    assert.equal(none.reserved_output_tokens, 0);
    assert.match(none.message, /^the request needs [\d,]+ input tokens, [\d,]+ more than the context window of 8,192, /);
    assert.match(none.message, /; shorten the newest message, the system prompt or the tool definitions$/);
    // Reserved by the proxy's COMPACTION_OPTIONS: lowering max_tokens would not help.
    const proxy = checkError(await post("reserving", "/v1/chat/completions", { model: "gpt-4", max_tokens: 500, messages: [huge] }), 413);
    assert.equal(proxy.reserved_output_tokens, 2000);
    assert.match(proxy.message, / \+ 2,000 reserved for the answer by the proxy = /);
    assert.doesNotMatch(proxy.message, /max_tokens/);
    // Reserved by the request's max_tokens.
    const own = checkError(await post("reserving", "/v1/chat/completions", { model: "gpt-4", max_tokens: 3000, messages: [huge] }), 413);
    assert.match(own.message, / \+ 3,000 reserved for the answer = .*, or lower max_tokens$/);
  });

  test("an error the proxy did not foresee is answered in the endpoint's own shape (Anthropic's on /v1/messages)", async () => {
    for (const [path, api, body] of [["/v1/messages", "anthropic", small("claude-sonnet-4-5")], ["/v1/chat/completions", "openai", small()]]) {
      // A status no Response can carry (200–599) makes passing the answer back throw.
      respond = (req, res) => res.writeHead(600, { "content-type": "application/json" }).end("{}");
      const e = checkError(await post("proxy", path, body), 500, api);
      assert.equal(e.code, "internal_error", path);
      assert.match(e.message, /^the proxy failed: /, path);
      if (api === "anthropic") assert.equal(e.type, "api_error");
    }
  });

  for (const compacted of [false, true]) {
    test(`a streamed response is passed through as it arrives (${compacted ? "compacted" : "forwarded as is"})`, async () => {
      const sent = compacted ? { ...conversation("anthropic", 200_000), stream: true } : { ...small(), stream: true };
      const first = compacted ? 'event: message_start\ndata: {"type":"message_start"}\n\n' : 'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n';
      const rest = compacted
        ? 'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"lo"}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
        : 'data: {"choices":[{"delta":{"content":"lo"}}]}\n\ndata: [DONE]\n\n';
      let seenFirst;
      const firstSeen = new Promise((ok) => (seenFirst = ok));
      const timing = {};
      respond = async (req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.write(first);
        // Hold the rest until the client has the first event (or 10 s have passed).
        timing.waited = await Promise.race([firstSeen.then(() => "client"), new Promise((ok) => setTimeout(() => ok("timeout"), 10_000))]);
        timing.restAt = performance.now();
        res.end(rest);
      };
      const path = compacted ? "/v1/messages" : "/v1/chat/completions";
      const r = await new Promise((ok, fail) => {
        const req = httpRequest({ host: "127.0.0.1", port: ports.proxy, path, method: "POST", headers: JSON_TYPE, agent: false }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => {
            if (timing.firstAt === undefined) {
              timing.firstAt = performance.now();
              timing.firstChunk = chunk;
              seenFirst();
            }
            text += chunk;
          });
          res.on("end", () => ok({ status: res.statusCode, headers: res.headers, text }));
          res.on("error", fail);
        });
        req.on("error", fail);
        req.end(JSON.stringify(sent));
      });
      assert.equal(r.status, 200);
      assert.equal(r.headers["content-type"], "text/event-stream");
      assert.equal(timing.waited, "client", "the first event reached the client while the upstream held the rest");
      assert.ok(timing.firstAt < timing.restAt, "first chunk before the upstream sent the rest");
      assert.equal(timing.firstChunk, first, "the first event arrived on its own");
      assert.equal(r.text, first + rest, "the whole stream, unchanged");
      if (compacted) assert.equal(parseNotice(r.headers[HEADER]).mode, "recency_preserving");
      else assert.match(r.headers[HEADER], UNTOUCHED);
      assert.equal(received.at(-1).url, path);
    });
  }

  test("upstream errors pass through with their status and headers", async () => {
    respond = (req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
      res.end('{"error":{"message":"slow down","type":"rate_limit_error"}}');
    };
    const r = await post("proxy", "/v1/chat/completions", small());
    assert.equal(r.status, 429);
    assert.equal(r.headers["retry-after"], "7");
    assert.equal(r.json.error.message, "slow down");
    assert.match(r.headers[HEADER], UNTOUCHED);
  });

  test("malformed requests get a 4xx JSON error and are not forwarded", async () => {
    const cases = [
      ["GET", () => send("proxy", "/v1/chat/completions", { method: "GET" }), 405, "method_not_allowed"],
      ["GET (Anthropic)", () => send("proxy", "/v1/messages", { method: "GET" }), 405, "method_not_allowed", "anthropic"],
      ["PUT", () => send("proxy", "/v1/chat/completions", { method: "PUT", body: "{}", headers: JSON_TYPE }), 405, "method_not_allowed"],
      ["text/plain", () => send("proxy", "/v1/chat/completions", { body: JSON.stringify(small()), headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type"],
      ["form", () => send("proxy", "/v1/messages", { body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type", "anthropic"],
      ["invalid JSON", () => post("proxy", "/v1/chat/completions", '{"model": "gpt-4o", "messages": [}'), 400, "invalid_json"],
      ["empty body", () => post("proxy", "/v1/chat/completions", ""), 400, "invalid_json"],
      ["invalid UTF-8", () => post("proxy", "/v1/chat/completions", Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, "invalid_json"],
      ["no messages", () => post("proxy", "/v1/chat/completions", { model: "gpt-4o", prompt: "hi" }), 400, "invalid_request"],
      ["messages not an array", () => post("proxy", "/v1/messages", { model: "claude-sonnet-4-5", messages: "hi", max_tokens: 5 }), 400, "invalid_request", "anthropic"],
      ["a JSON array", () => post("proxy", "/v1/chat/completions", [{ role: "user", content: "hi" }]), 400, "invalid_request"],
      ["JSON null", () => post("proxy", "/v1/chat/completions", "null"), 400, "invalid_request"],
      ["a message the library cannot read", () => post("proxy", "/v1/chat/completions", { model: "gpt-4o", messages: [{ role: "user", content: 42 }] }), 400, "invalid_request"],
      ["empty messages", () => post("proxy", "/v1/chat/completions", { model: "gpt-4o", messages: [] }), 400, "invalid_request"],
      ["unknown path", () => post("proxy", "/v1/completions", small()), 404, "not_found"],
    ];
    for (const [what, call, status, code, api = "openai"] of cases) {
      const { result: r, got } = await upstreamSees(call);
      const e = checkError(r, status, api);
      assert.equal(e.code, code, `${what}: ${r.text}`);
      assert.equal(got.length, 0, `${what}: not forwarded`);
      if (status === 405) assert.equal(r.headers.allow, "POST");
    }
  });

  test("an unreachable upstream is a 502 and a missing UPSTREAM_URL a 500, both JSON", async () => {
    const dead = await post("dead", "/v1/chat/completions", small());
    assert.equal(checkError(dead, 502).code, "upstream_unreachable");
    assert.match(dead.headers[HEADER], UNTOUCHED);
    const unset = await post("unset", "/v1/messages", small("claude-sonnet-4-5"));
    const e = checkError(unset, 500, "anthropic");
    assert.equal(e.code, "proxy_misconfigured");
    assert.match(e.message, /UPSTREAM_URL/);
  });

  test("CPU time per 200K-token request (workerd bench, quick run)", async (t) => {
    const out = run(WORKERD, ["bench", "--quick", "--no-startup", "--format", "json", "bench/wrangler.jsonc", "chat-compaction-proxy-bench/proxy:*"], {
      cwd: app,
      env: { WORKERD_ESBUILD: ESBUILD },
      timeout: 180_000,
    });
    const report = JSON.parse(out);
    const cases = report.groups.flatMap((g) => g.cases);
    assert.equal(cases.length, 5, out.slice(0, 2000));
    for (const c of cases) {
      assert.equal(c.status, "ok", `${c.name}: ${JSON.stringify(c).slice(0, 500)}`);
      t.diagnostic(`${c.name}: cpu median ${(c.cpuNs.median / 1e6).toFixed(1)} ms, wall median ${(c.wallNs.median / 1e6).toFixed(1)} ms (${c.cpuNs.samples.length} samples)`);
    }
  });
});
