// The JS boundary under hostile inputs: throwing getters, Proxy traps and toJSON,
// re-entrant calls, getters that answer new arrays, absurd lengths and counts,
// lone surrogates in ids, and pins given as a function.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compact, compactSync, estimateTokens, measure, rebase, shouldCompact, validate, CompactionError } from "../../pkg/node.js";
import { checkRules } from "./rules.mjs";

const sample = JSON.parse(readFileSync(new URL("../../examples/data/tau-bench-airline-3.json", import.meta.url), "utf8"));
const base = { mode: "recency_preserving", contextWindow: 8000 };

test("a getter, Proxy trap or toJSON that throws is INVALID_INPUT naming the message, with the cause", () => {
  const boom = new Error("storage detached");
  const getter = sample.slice();
  getter[5] = { role: "user", get content() { throw boom; } };
  const proxy = sample.slice();
  proxy[7] = new Proxy({ role: "user", content: "x" }, { ownKeys() { throw boom; } });
  const json = sample.slice();
  json[9] = { role: "user", content: "x", toJSON() { throw boom; } };
  for (const [history, at] of [[getter, 5], [proxy, 7], [json, 9]]) {
    assert.throws(() => compactSync(history, base), (e) => {
      assert.ok(e instanceof CompactionError);
      assert.equal(e.code, "INVALID_INPUT");
      assert.match(e.message, new RegExp(`^messages\\[${at}\\]: reading the message threw: storage detached`));
      assert.equal(e.cause, boom);
      return true;
    });
  }
  assert.equal(compactSync(sample, base).notice.mode, "recency_preserving", "the instance keeps working");
});

test("a call from inside a getter works and leaves the outer call intact", () => {
  let inner;
  const history = sample.slice();
  history[4] = {
    role: "user",
    get content() {
      inner = compactSync(sample, { mode: "deterministic" }); // re-entrant
      return "what about my booking?";
    },
  };
  const outer = compactSync(history, base);
  const plain = compactSync(history.map((m, i) => (i === 4 ? { role: "user", content: "what about my booking?" } : m)), base);
  assert.equal(inner.messages.length, 3); // system, summary, the closing request
  assert.equal(JSON.stringify(outer.notice), JSON.stringify(plain.notice));
  checkRules("openai", outer.messages);
});

test("a messages getter that answers a new array each time is read once", () => {
  const request = { model: "gpt-4o", get messages() { return sample.map((m) => ({ ...m })); } };
  const r = compactSync(request, base);
  assert.ok(r.messages.every((m) => m !== undefined));
  checkRules("openai", r.messages);
  assert.equal(r.request.model, "gpt-4o");
});

test("absurd array lengths are refused at once", () => {
  const sparse = [];
  sparse.length = 2 ** 32 - 1;
  const started = Date.now();
  assert.throws(() => compactSync(sparse), (e) => e.code === "INVALID_INPUT" && /10000000/.test(e.message));
  assert.ok(Date.now() - started < 1000);
});

test("a countTokens answer above 2^40 (no text has that many tokens) is INVALID_CONFIG naming it, sums never wrap", () => {
  for (const n of [1e30, 2 ** 53, 2 ** 50, 2 ** 40 + 1]) {
    assert.throws(() => estimateTokens(sample, { countTokens: () => n }), (e) => e.code === "INVALID_CONFIG" && e.message.includes(`countTokens returned ${n}; expected`) && /up to 2\^40/.test(e.message), `${n}`);
    assert.throws(() => shouldCompact(sample, { countTokens: () => n }), { code: "INVALID_CONFIG" });
  }
  const big = estimateTokens(sample, { countTokens: () => 2 ** 40 });
  assert.ok(big >= sample.length * 2 ** 40 && Number.isSafeInteger(big), `${big}`);
});

test("two spellings of one option with different values are an error", () => {
  assert.throws(() => compactSync(sample, { contextWindow: 4000, context_window: 200000 }), (e) => e.code === "INVALID_CONFIG" && /contextWindow and context_window/.test(e.message));
});

test("tool ids that differ only in a lone surrogate stay different, and edited copies keep them", () => {
  const a = "call_\uD800";
  const b = "call_\uDBFF";
  const history = [
    { role: "user", content: "go" },
    { role: "assistant", content: null, tool_calls: [{ id: a, type: "function", function: { name: "t", arguments: "{}" } }, { id: b, type: "function", function: { name: "t", arguments: "{}" } }] },
    { role: "tool", tool_call_id: a, content: "x".repeat(3000) },
    { role: "tool", tool_call_id: b, content: "y".repeat(3000) },
    { role: "user", content: "and \uDC00 then" },
  ];
  for (let i = 0; i < 30; i++) history.push({ role: i % 2 ? "assistant" : "user", content: `turn ${i} ${"z".repeat(200)}` });
  const r = compactSync(history, { mode: "recency_preserving", contextWindow: 4000, protectHead: 4 });
  const ids = r.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
  assert.deepEqual(ids, [a, b], "both results kept, ids exactly as given");
  checkRules("openai", r.messages);
});

test("pin: a function or a list of indices keeps those messages in every mode", async () => {
  const pin = (m, i) => typeof m.content === "string" && m.content.includes("cancel");
  const wanted = sample.filter((m, i) => pin(m, i));
  assert.ok(wanted.length > 0);
  for (const mode of ["deterministic", "recency_preserving"]) {
    const r = compactSync(sample, { mode, contextWindow: 4000, pin });
    for (const m of wanted) assert.ok(r.messages.includes(m), `${mode}: a pinned message is the caller's own object`);
    const byIndex = compactSync(sample, { mode, contextWindow: 4000, pin: [6] });
    assert.ok(byIndex.messages.includes(sample[6]), `${mode}: pinned by index`);
  }
  const s = await compact(sample, { mode: "structured", contextWindow: 4000, pin, summarize: (req) => {
    for (const m of wanted) assert.ok(!req.messages.includes(m), "a pinned message is not summarized");
    return ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps", "## Critical Context"].map((h) => (h === "## Progress" ? h : `${h}\n(none)`)).join("\n");
  } });
  for (const m of wanted) assert.ok(s.messages.includes(m));
  assert.throws(() => compactSync(sample, { pin: "cancel" }), { code: "INVALID_CONFIG" });
});

test("a revoked Proxy as options or history, and a message JSON cannot write, get coded errors", () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const h = sample.slice(0, 6);
  for (const [name, f] of [["compactSync", () => compactSync(h, proxy)], ["measure", () => measure(h, proxy)], ["validate", () => validate(h, proxy)]]) {
    assert.throws(f, (e) => e instanceof CompactionError && e.code === "INVALID_CONFIG" && e.cause instanceof TypeError, name);
  }
  const r = compactSync(sample, base);
  assert.throws(() => rebase(r, proxy), (e) => e instanceof CompactionError && e.code === "INVALID_INPUT");
  // A message the marker covers replaced by one holding a BigInt or a cycle has
  // changed; one the result keeps is taken as it is now, and cannot be read.
  assert.ok(!r.messages.includes(sample[20]) && r.messages.includes(sample[0]));
  for (const at of [20, 0]) {
    const cyclic = { ...sample[at] };
    cyclic.self = cyclic;
    for (const changed of [{ ...sample[at], n: 1n }, cyclic]) {
      const history = sample.map((m, i) => (i === at ? changed : m));
      const expected = at === 20 ? { code: "STALE_HISTORY", message: /^messages\[20\] changed/ } : { code: "INVALID_INPUT", message: /^messages\[0\]: / };
      assert.throws(() => rebase(r, history), expected);
    }
  }
  // validate takes `cache` as every other call does, and honours cache: false
  assert.deepEqual(validate(h, { cache: false }), validate(h));
  assert.deepEqual(validate(h, { cache: true }), validate(h));
});
