// The package's CLI (pkg/bin/cli.js) run as a process: `validate` prints one line per
// violation and exits 1 on a broken history, 0 with a "valid" line on a good one;
// JSON Lines files are read like JSON ones.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
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
  assert.match(badProvider.stderr, /^error INVALID_CONFIG: provider/);
  const notJson = run("validate", file("bad.json", "{ not json"));
  assert.equal(notJson.status, 1);
  assert.match(notJson.stderr, /is not JSON/);
  const unreadable = run("validate", file("bad.json", '{"role": "user", "content": 42}'));
  assert.equal(unreadable.status, 1);
  assert.match(unreadable.stderr, /^error INVALID_INPUT: /);
  assert.equal(run("validate", "--mode", "deterministic", users).status, 2, "a compaction option is a usage error");
  assert.equal(run("compact", "--provider", "openai", users).status, 2, "a validate option is a usage error elsewhere");
  assert.equal(run("validate", join(dir, "missing.json")).status, 1);
  const help = run("--help");
  assert.equal(help.status, 0);
  assert.match(help.stderr, /chat-compaction validate \[--format FORMAT\] \[--provider openai\|anthropic\|gemini\|bedrock\] \[--strict-alternation\] FILE/);
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
