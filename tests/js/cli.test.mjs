// The package's CLI (pkg/bin/cli.js) run as a process: `validate` prints one line per
// violation and exits 1 on a broken history, 0 with a "valid" line on a good one;
// JSON Lines files are read like JSON ones.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FORMATS } from "./histories.mjs";

const cli = fileURLToPath(new URL("../../pkg/bin/cli.js", import.meta.url));
let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "chat-compaction-cli-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `content` (JSON, or text as is) to a temp file. */
function file(name, content) {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function run(...args) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 30_000 });
  assert.equal(r.error, undefined);
  return r;
}

test("validate exits 1 with one line per violation on a broken history", () => {
  const broken = file("broken.json", {
    model: "claude-sonnet-4-5",
    messages: [
      { role: "user", content: "read it" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read", input: {} }] },
      { role: "user", content: "go on" },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "x" }] },
    ],
  });
  const r = run("validate", broken);
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 2, r.stdout);
  assert.match(lines[0], /^messages\[1\] MISSING_RESULT: \S.*toolu_1/);
  assert.match(lines[1], /^messages\[3\] ORPHAN_RESULT: \S.*toolu_9/);
  assert.match(r.stderr, /^invalid \(anthropic, 4 messages\): 2 violations$/m);
  const strict = run("validate", "--strict-alternation", broken);
  assert.equal(strict.status, 1);
  assert.match(strict.stdout, /^messages\[3\] ROLES_NOT_ALTERNATING: /m);
});

test("validate exits 0 with a valid line; --format, --provider, JSON Lines and standard input", () => {
  const gemini = FORMATS.gemini;
  const request = gemini.request(gemini.history(3));
  const good = run("validate", file("gemini.json", request));
  assert.equal(good.status, 0, good.stdout + good.stderr);
  assert.equal(good.stdout, `valid (gemini, ${request.contents.length} messages)\n`);
  // The same turns ending on a model turn, as a request: Gemini answers user turns only.
  const ends = file("ends.json", { ...request, contents: request.contents.slice(0, -1) });
  const bad = run("validate", ends);
  assert.equal(bad.status, 1);
  assert.match(bad.stdout, /^messages\[\d+\] ENDS_ON_MODEL: /m);
  // JSON Lines: one message a line (a stored history: the newest call may still run).
  const items = FORMATS["openai-responses"].history(2);
  const jsonl = file("session.jsonl", items.map((m) => JSON.stringify(m)).join("\n") + "\n");
  const lines = run("validate", jsonl);
  assert.equal(lines.status, 0, lines.stdout + lines.stderr);
  assert.equal(lines.stdout, `valid (openai-responses, ${items.length} messages)\n`);
  const reasoningLast = file("reasoning.jsonl", [...items, { type: "reasoning", id: "rs_z", summary: [] }].map((m) => JSON.stringify(m)).join("\n"));
  const dangling = run("validate", "--format", "openai-responses", reasoningLast);
  assert.equal(dangling.status, 1);
  assert.match(dangling.stdout, new RegExp(`^messages\\[${items.length}\\] REASONING_WITHOUT_FOLLOWER: \\S[^\\n]*\\n$`));
  const users = file("users.json", [{ role: "user", content: "a" }, { role: "user", content: "b" }]);
  assert.equal(run("validate", users).status, 0);
  const bedrock = run("validate", "--provider", "bedrock", "--format", "anthropic", users);
  assert.equal(bedrock.status, 1);
  assert.match(bedrock.stdout, /^messages\[1\] ROLES_NOT_ALTERNATING: /m);
  const stdin = spawnSync(process.execPath, [cli, "validate", "-"], { input: JSON.stringify(request), encoding: "utf8" });
  assert.equal(stdin.status, 0);
  assert.match(stdin.stdout, /^valid \(gemini, /);
});

test("validate: errors and usage", () => {
  const users = file("users2.json", [{ role: "user", content: "a" }]);
  const badProvider = run("validate", "--provider", "mistral", users);
  assert.equal(badProvider.status, 1);
  assert.match(badProvider.stderr, /^error INVALID_CONFIG \(.*users2\.json\): provider/);
  const notJson = run("validate", file("bad.json", "{ not json"));
  assert.equal(notJson.status, 1);
  assert.match(notJson.stderr, /is not JSON/);
  const unreadable = run("validate", file("bad.json", '{"role": "user", "content": 42}'));
  assert.equal(unreadable.status, 1);
  assert.match(unreadable.stderr, /^error INVALID_INPUT \(.*bad\.json\): /);
  assert.equal(run("validate", "--mode", "deterministic", users).status, 2, "a compaction option is a usage error");
  assert.equal(run("compact", "--provider", "openai", users).status, 2, "a validate option is a usage error elsewhere");
  assert.equal(run("validate", join(dir, "missing.json")).status, 1);
  const help = run("--help");
  assert.equal(help.status, 0);
  assert.equal(run("help").stdout, help.stdout, "help and --help print the same");
  assert.match(help.stdout, /chat-compaction validate \[--format FORMAT\] \[--provider openai\|anthropic\|gemini\|bedrock\] \[--strict-alternation\] FILE/);
});

test("compact reads JSON Lines too, and a request keyed contents comes back under contents", () => {
  const contents = FORMATS.gemini.history(10);
  const jsonl = file("gemini.jsonl", contents.map((m) => JSON.stringify(m)).join("\n"));
  const r = run("compact", "--mode", "recency_preserving", "--context-window", "2000", jsonl);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.ok(Array.isArray(out) && out.length < contents.length);
  const request = file("gemini-request.json", FORMATS.gemini.request(contents));
  const fromRequest = JSON.parse(run("compact", "--mode", "recency_preserving", "--context-window", "2000", request).stdout);
  assert.deepEqual(Object.keys(fromRequest), ["systemInstruction", "contents", "generationConfig"]);
  const checked = run("validate", file("compacted.json", fromRequest));
  assert.equal(checked.status, 0, checked.stdout);
});

test("errors name the file, and bad JSON says the line and column", () => {
  const missing = run("compact", join(dir, "nope.json"));
  assert.equal(missing.status, 1);
  assert.equal(missing.stderr, `error: cannot read the history ${join(dir, "nope.json")}: no such file\n`);
  const bad = run("measure", file("broken.json", '{\n  "messages": [\n    {"role": "user", content: 1}\n  ]\n}'));
  assert.equal(bad.status, 1);
  assert.equal(bad.stderr, `error: ${join(dir, "broken.json")} is not JSON: Expected double-quoted property name (line 3, column 22)\n`);
  const unreadable = run("compact", file("role.json", [{ role: "wizard", content: "x" }]));
  assert.match(unreadable.stderr, /^error INVALID_INPUT \(.*role\.json\): messages\[0\]/);
  const config = run("compact", "--config", join(dir, "no.toml"), file("ok.json", [{ role: "user", content: "x" }]));
  assert.match(config.stderr, /cannot read the config .*no\.toml: no such file/);
  assert.equal(run("compact", "--protect-head", "two", file("ok2.json", [{ role: "user", content: "x" }])).status, 2);
});

/** A conversation long enough to compact at a 3,000-token window. */
function longChat(n = 30) {
  const m = [{ role: "system", content: "You are terse." }];
  for (let i = 0; i < n; i++) {
    m.push({ role: "user", content: `question ${i}: what does src/mod_${i}.rs do? ${"please explain it ".repeat(20)}` });
    m.push({ role: "assistant", content: `answer ${i}: it parses the input. ${"it reads tokens one by one ".repeat(20)}` });
  }
  m.push({ role: "user", content: "and the last one?" });
  return m;
}

test("measure prints the meter, heaviest messages first; check prints its verdict and numbers", () => {
  const chat = longChat();
  chat[7].content += " and a very long addendum".repeat(200);
  const path = file("chat.json", chat);
  const m = run("measure", "--context-window", "3000", path);
  assert.equal(m.status, 0, m.stderr);
  assert.match(m.stdout, /^format {8}openai, 62 messages$/m);
  assert.match(m.stdout, /^window {8}3,000 \(option\)$/m);
  assert.match(m.stdout, /^threshold {5}2,850: compaction is due$/m);
  const rows = m.stdout.split("heaviest messages:\n")[1].trim().split("\n").slice(1);
  assert.match(rows[0], /^\s+7\s+user\s/, "the longest message comes first");
  const due = run("check", "--context-window", "3000", path);
  assert.equal(due.status, 0);
  assert.match(due.stdout, /^compaction is due \([\d,]+ tokens, threshold 2,850, window 3,000\)$/m);
  const notYet = run("check", path);
  assert.equal(notYet.status, 3);
  assert.match(notYet.stdout, /^no compaction needed yet \(.*window 200,000\)$/m);
  // Flags for the options reach them: a lower threshold.
  assert.match(run("check", "--context-window", "3000", "--threshold", "0.5", path).stdout, /threshold 1,500/);
  // --config prints its warnings.
  const toml = file("moltis.toml", '[chat.compaction]\nmode = "recency_preserving"\ncontext_window = 3000\nbogus = 1\n');
  const fromConfig = run("compact", "--config", toml, path);
  assert.equal(fromConfig.status, 0, fromConfig.stderr);
  assert.match(fromConfig.stderr, /^warning UNKNOWN_OPTION \(.*moltis\.toml\): unknown option "bogus"/m);
  assert.match(fromConfig.stderr, /Mode: Recency preserving/);
});

/** Runs the CLI without blocking this process (the mock server answers meanwhile); one that hangs is killed after 30 s. */
function runAsync(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, timeout: 30_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** A mock OpenAI-compatible server: streams `summary` as SSE, or answers `status`. */
async function mockServer(handler) {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => handler(req, JSON.parse(body || "{}"), res));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${server.address().port}/v1` };
}

/** A structured summary that passes the quality check, in three streamed pieces. */
const SUMMARY = [
  "## Goal\nUnderstand every module of the parser.\n## Constraints & Preferences\n(none)\n",
  "## Progress\n### Done\nModules 0 to 29 were explained: each parses its input by reading tokens (src/mod_0.rs … src/mod_29.rs).\n### In Progress\n(none)\n### Blocked\n(none)\n",
  "## Key Decisions\n(none)\n## Relevant Files\nsrc/mod_0.rs … src/mod_29.rs\n## Next Steps\nAnswer the last question.\n## Critical Context\n(none)\n",
];

test("compact --mode structured streams the summary from an OpenAI-compatible endpoint; the key comes from the environment", async () => {
  const seen = [];
  const { server, url } = await mockServer((req, body, res) => {
    seen.push({ path: req.url, auth: req.headers.authorization, body });
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const piece of SUMMARY) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: piece } }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 900, completion_tokens: 80 } })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  try {
    const path = file("long.json", longChat());
    const r = await runAsync(["compact", "--mode", "structured", "--context-window", "3000", "--endpoint", url, "--model", "small-model", path], { CHAT_COMPACTION_API_KEY: "sk-test" });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].path, "/v1/chat/completions");
    assert.equal(seen[0].auth, "Bearer sk-test");
    assert.equal(seen[0].body.model, "small-model");
    assert.equal(seen[0].body.stream, true);
    assert.match(r.stderr, /^summarizing [\d,]+ tokens with small-model \(attempt 1\)…$/m);
    assert.ok(r.stderr.includes(SUMMARY.join("")), "the summary streamed to standard error");
    assert.match(r.stderr, /Mode: Structured/);
    const out = JSON.parse(r.stdout);
    assert.ok(out.some((m) => typeof m.content === "string" && m.content.includes("Modules 0 to 29 were explained")), "the summary is in the result");
    assert.ok(!r.stdout.includes("sk-test") && !r.stderr.includes("sk-test"), "the key is never printed");
  } finally {
    server.close();
  }
});

test("an endpoint that streams forever or hangs: the LLM modes stop, fall back (structured) or fail (llm_replace), and exit", async () => {
  const piece = `data: ${JSON.stringify({ choices: [{ delta: { content: "A fact worth keeping about the parser. " } }] })}\n\n`;
  const { server, url } = await mockServer((req, body, res) => {
    if (req.url.startsWith("/hang/")) return; // headers never come
    res.writeHead(200, { "content-type": "text/event-stream" });
    const timer = setInterval(() => res.write(piece), 1);
    res.on("close", () => clearInterval(timer));
  });
  try {
    const path = file("forever.json", longChat());
    const args = ["compact", "--context-window", "3000", "--max-summary-tokens", "256", "--model", "m", path];
    const structured = await runAsync(["--mode", "structured", "--endpoint", url, ...args]);
    assert.equal(structured.status, 0, structured.stderr);
    assert.match(structured.stderr, /^fell back from structured \(QUALITY_CHECK\): .*more than twice the 256/m);
    const replace = await runAsync(["--mode", "llm_replace", "--endpoint", url, ...args]);
    assert.equal(replace.status, 1, replace.stderr);
    assert.match(replace.stderr, /^error LLM_FAILED \(.*forever\.json\): .*more than twice the 256/m);
    const hung = await runAsync(["--mode", "structured", "--endpoint", url.replace(/\/v1$/, "/hang/v1"), "--timeout-ms", "200", ...args]);
    assert.equal(hung.status, 0, hung.stderr);
    assert.match(hung.stderr, /^fell back from structured \(TIMEOUT\): the summarizer did not answer within 200 ms/m);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("an Anthropic endpoint given with or without /v1 is asked at /v1/messages", async () => {
  const seen = [];
  const { server, url } = await mockServer((req, body, res) => {
    seen.push(req.url);
    res.writeHead(500).end("{}");
  });
  try {
    const path = file("long-anthropic.json", longChat().slice(1));
    for (const endpoint of [url, url.replace(/\/v1$/, ""), `${url}/`]) {
      const r = await runAsync(["compact", "--mode", "llm_replace", "--format", "anthropic", "--api", "anthropic", "--context-window", "3000", "--endpoint", endpoint, "--model", "m", path]);
      assert.equal(r.status, 1, r.stderr);
    }
    assert.deepEqual(seen, ["/v1/messages", "/v1/messages", "/v1/messages"]);
  } finally {
    server.close();
  }
});

test("a failing endpoint: structured falls back (exit 0), llm_replace fails (exit 1); the LLM modes need --endpoint", async () => {
  const { server, url } = await mockServer((req, body, res) => {
    res.writeHead(500, { "content-type": "application/json" });
    res.end('{"error": "overloaded"}');
  });
  try {
    const path = file("long2.json", longChat());
    const structured = await runAsync(["compact", "--mode", "structured", "--context-window", "3000", "--endpoint", url, "--model", "m", path]);
    assert.equal(structured.status, 0, structured.stderr);
    assert.match(structured.stderr, /^fell back from structured \(LLM_FAILED\): .*HTTP 500/m);
    assert.match(structured.stderr, /Mode: Recency preserving/);
    const replace = await runAsync(["compact", "--mode", "llm_replace", "--context-window", "3000", "--endpoint", url, "--model", "m", path]);
    assert.equal(replace.status, 1);
    assert.match(replace.stderr, /^error LLM_FAILED \(.*long2\.json\): /m);
    assert.equal(replace.stdout, "", "nothing is written on failure");
  } finally {
    server.close();
  }
  const path = file("long3.json", longChat());
  assert.equal(run("compact", "--mode", "structured", path).status, 2, "no endpoint: a usage error");
  assert.equal(run("compact", "--mode", "structured", "--endpoint", "http://127.0.0.1:9/v1", path).status, 2, "no model: a usage error");
  assert.equal(run("measure", "--endpoint", "http://127.0.0.1:9/v1", path).status, 2, "--endpoint belongs to compact");
  const offline = run("compact", "--timeout-ms", "5", path);
  assert.equal(offline.status, 2, "--timeout-ms belongs to the LLM modes");
  assert.match(offline.stderr, /^--timeout-ms is for the LLM modes/);
});

test("--version; errors name the file, and an option a flag set by the flag; measure shows what the heaviest messages say", () => {
  const version = run("--version");
  assert.equal(version.status, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  const path = file("short.json", [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]);
  const small = run("compact", "--mode", "recency_preserving", path);
  assert.equal(small.status, 1);
  assert.match(small.stderr, /^error TOO_SMALL_TO_COMPACT \(.*short\.json\): /);
  const role = run("compact", "--pin-roles", "human", path);
  assert.match(role.stderr, /^error INVALID_CONFIG \(.*short\.json\): --pin-roles: expected roles/);
  const tool = file("tools.json", [
    { role: "user", content: "read it" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a.rs"}' } }] },
    { role: "tool", tool_call_id: "c1", content: "fn main() { println!(\"the file's text\"); }" },
  ]);
  const table = run("measure", tool).stdout;
  assert.match(table, /tool .*fn main\(\) \{ println!/);
  assert.match(table, /assistant .*\{"path":"a\.rs"\}/);
  assert.doesNotMatch(table, /"role"/, "the text, not the message's JSON");
});

test("--config leaves the window to the request's model unless it sets one; --strict makes its unknown keys errors", () => {
  const request = file("gpt4.json", { model: "gpt-4", messages: [{ role: "user", content: "hi" }] });
  assert.match(run("measure", request).stdout, /^window {8}8,192 \(model\)$/m);
  const modeOnly = file("mode.toml", '[chat.compaction]\nmode = "recency_preserving"\n');
  assert.match(run("measure", "--config", modeOnly, request).stdout, /^window {8}8,192 \(model\)$/m);
  const withWindow = file("window.toml", "[chat.compaction]\ncontext_window = 50000\n");
  assert.match(run("measure", "--config", withWindow, request).stdout, /^window {8}50,000 \(option\)$/m);
  const bogus = file("bogus.toml", "[chat.compaction]\nbogus_key = 1\n");
  const strict = run("measure", "--strict", "--config", bogus, request);
  assert.equal(strict.status, 1);
  assert.match(strict.stderr, /^error INVALID_CONFIG \(.*bogus\.toml\): unknown option "bogus_key".*\(--strict\)$/m);
  assert.equal(run("measure", "--config", bogus, request).status, 0, "without --strict a warning");
});

test("a byte order mark is not JSON's; one FILE at a time; check prints its warnings; a file error is said in words", () => {
  const bom = file("bom.json", "\uFEFF" + JSON.stringify([{ role: "user", content: "hi" }]));
  const m = run("measure", bom);
  assert.equal(m.status, 0, m.stderr);
  assert.match(m.stdout, /openai, 1 message/);
  const two = run("measure", bom, bom);
  assert.equal(two.status, 2);
  assert.match(two.stderr, /one FILE at a time/);
  const check = run("check", "--reserve-output-tokens", "300000", bom);
  assert.match(check.stderr, /^warning NO_ROOM_FOR_INPUT: /m);
  const missing = run("measure", join(dir, "nope.json"));
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^error: cannot read the history .*nope\.json: no such file$/m);
  const responses = run("measure", file("string-input.json", { model: "gpt-5", input: "Write a haiku." }));
  assert.match(responses.stdout, /openai-responses, 1 message/);
});

test("numbers are plain decimals; --model and --endpoint belong to compact and must make sense", () => {
  const path = file("small.json", [{ role: "user", content: "hi" }]);
  for (const bad of [["--context-window", "0x100"], ["--context-window", " 5000"], ["--protect-head", "1e3"], ["--threshold", "0.5x"]]) {
    const r = run("measure", ...bad, path);
    assert.equal(r.status, 2, bad.join(" "));
    assert.match(r.stderr, new RegExp(`^${bad[0]}: expected a`, "m"));
  }
  assert.equal(run("measure", "--threshold", ".5", "--context-window", "8000", path).status, 0);
  const model = run("measure", "--model", "gpt-4o", path);
  assert.equal(model.status, 2);
  assert.match(model.stderr, /the window is --context-window/);
  const url = run("compact", "--mode", "llm_replace", "--endpoint", "notaurl", "--model", "m", path);
  assert.equal(url.status, 2);
  assert.match(url.stderr, /--endpoint: expected a URL/);
});

test("an endpoint that answers one JSON object instead of a stream is read (OpenAI and Anthropic)", async () => {
  const text = SUMMARY.join("");
  const { server, url } = await mockServer((req, body, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url === "/v1/messages") res.end(JSON.stringify({ type: "message", role: "assistant", content: [{ type: "text", text }], usage: { input_tokens: 900, output_tokens: 80 } }));
    else res.end(JSON.stringify({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: text } }], usage: { prompt_tokens: 900, completion_tokens: 80 } }));
  });
  try {
    const chat = longChat();
    for (const [api, path] of [["openai", file("json-answer.json", chat)], ["anthropic", file("json-answer-anthropic.json", chat.slice(1))]]) {
      const r = await runAsync(["compact", "--mode", "structured", "--api", api, "--format", api, "--context-window", "3000", "--endpoint", url, "--model", "m", path]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /Mode: Structured/, `${api}: ${r.stderr}`);
      assert.match(r.stderr, /Used 980 tokens \(900 in \+ 80 out\)/, `${api}: the usage reported is read`);
      assert.ok(r.stdout.includes("Modules 0 to 29 were explained"), `${api}: the summary is in the result`);
    }
  } finally {
    server.close();
  }
});

test("an HTML page or an error event from the endpoint is quoted, not an empty summary", async () => {
  const { server, url } = await mockServer((req, body, res) => {
    if (req.url.startsWith("/html/")) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return res.end("<!DOCTYPE html><html><head><title>Sign in to the gateway</title></head><body>…</body></html>");
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (req.url === "/v1/messages") {
      res.write(`event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 900 } } })}\n\n`);
      return res.end(`event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`);
    }
    // (OpenRouter and other gateways report a failure mid-stream this way)
    res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: "## Goal\n" } }] })}\n\n`);
    res.end(`data: ${JSON.stringify({ error: { code: 502, message: "Provider returned error: upstream overloaded" } })}\n\n`);
  });
  try {
    const path = file("html.json", longChat());
    const args = ["compact", "--context-window", "3000", "--model", "m", path];
    const html = await runAsync(["--mode", "llm_replace", "--endpoint", url.replace(/\/v1$/, "/html/v1"), ...args]);
    assert.equal(html.status, 1, html.stderr);
    assert.match(html.stderr, /^error LLM_FAILED \(.*html\.json\): .*text\/html.*<!DOCTYPE html><html><head><title>Sign in to the gateway/m);
    const structured = await runAsync(["--mode", "structured", "--endpoint", url.replace(/\/v1$/, "/html/v1"), ...args]);
    assert.equal(structured.status, 0, structured.stderr);
    assert.match(structured.stderr, /^fell back from structured \(LLM_FAILED\): .*<!DOCTYPE html>/m);
    const event = await runAsync(["--mode", "llm_replace", "--endpoint", url, ...args]);
    assert.equal(event.status, 1, event.stderr);
    assert.match(event.stderr, /^error LLM_FAILED \(.*html\.json\): .*Provider returned error: upstream overloaded/m);
    const anthropic = await runAsync(["compact", "--mode", "llm_replace", "--api", "anthropic", "--format", "anthropic", "--endpoint", url, "--context-window", "3000", "--model", "m", file("event-anthropic.json", longChat().slice(1))]);
    assert.equal(anthropic.status, 1, anthropic.stderr);
    assert.match(anthropic.stderr, /^error LLM_FAILED \(.*event-anthropic\.json\): .*Overloaded/m);
  } finally {
    server.close();
  }
});

test("a --config TOML error names the config file, not the history", () => {
  const history = file("config-history.json", [{ role: "user", content: "hi" }]);
  const broken = file("broken.toml", "[chat.compaction]\nmode = \n");
  const syntax = run("measure", "--config", broken, history);
  assert.equal(syntax.status, 1);
  assert.match(syntax.stderr, /^error INVALID_CONFIG \(.*broken\.toml\): invalid TOML \(line 2, /);
  assert.doesNotMatch(syntax.stderr, /config-history\.json/);
  const typed = run("compact", "--config", file("typed.toml", '[chat.compaction]\ncontext_window = "big"\n'), history);
  assert.equal(typed.status, 1);
  assert.match(typed.stderr, /^error INVALID_CONFIG \(.*typed\.toml\): .*context_window.*line 2/);
});

test("a negative number is a bad value, not an ambiguous flag", () => {
  const path = file("negative.json", [{ role: "user", content: "hi" }]);
  for (const [command, flag, value, expected] of [["measure", "--context-window", "-5", "a whole number"], ["check", "--threshold", "-0.5", "a number"], ["compact", "--timeout-ms", "-1", "a whole number"]]) {
    const r = run(command, flag, value, path);
    assert.equal(r.status, 2, `${flag} ${value}`);
    assert.equal(r.stderr, `${flag}: expected ${expected}, got "${value}"\n`);
  }
});

test("a UTF-16 file (a byte order mark says so) is read, as Windows tools write it", () => {
  const history = [{ role: "user", content: "Grüße — ¿qué tal? 中文 🧮" }, { role: "assistant", content: "Bien." }];
  const text = JSON.stringify(history);
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
  const be = Buffer.from(le).swap16();
  for (const [name, bytes] of [["utf16le.json", le], ["utf16be.json", be]]) {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    const r = run("estimate", path);
    assert.equal(r.status, 0, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, run("estimate", file(`utf8-${name}`, text)).stdout, name);
  }
  const toml = join(dir, "utf16.toml");
  writeFileSync(toml, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("[chat.compaction]\ncontext_window = 50000\n", "utf16le")]));
  assert.match(run("measure", "--config", toml, file("plain.json", history)).stdout, /^window {8}50,000 \(option\)$/m);
});

test("an unknown flag is named, with the nearest flag", () => {
  const path = file("flags.json", [{ role: "user", content: "hi" }]);
  const typo = run("measure", "--context-windw", "8000", path);
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /^unknown flag --context-windw; did you mean --context-window\?\n/);
  assert.match(run("measure", "--protect-tail", "4", path).stderr, /^unknown flag --protect-tail; did you mean --protect-tail-min\?\n/);
  assert.match(run("measure", "--tokeniser=claude", path).stderr, /^unknown flag --tokeniser; did you mean --tokenizer\?\n/);
  const far = run("measure", "--frobnicate", path);
  assert.equal(far.status, 2);
  assert.match(far.stderr, /^unknown flag --frobnicate\nusage:/);
});
