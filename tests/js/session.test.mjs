// The session (src/session.rs): wasm keeps the views of the last history it
// read, and the JS layer sends the messages it holds, unchanged at the start
// of the history, as one word each. Whatever the caller does between calls,
// a call must answer what the same call without the cache answers (the
// model test in cache-model.test.mjs does this at random; these are the cases
// a session can get wrong that random edits rarely reach).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CompactionError, compactSync, estimateTokens, measure } from "../../pkg/node.js";
import { FORMATS } from "./histories.mjs";

const body = (i) => `output of step ${i}: ` + "lorem ipsum dolor sit amet ".repeat(30);
const round = (i) => [
  { role: "user", content: `Step ${i}: read src/m${i}.rs. TODO: the tests.` },
  { role: "assistant", content: null, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "read", arguments: JSON.stringify({ path: `src/m${i}.rs` }) } }] },
  { role: "tool", tool_call_id: `c${i}`, content: body(i) },
  { role: "assistant", content: `Read m${i}.`, requestInputTokens: 1000 + 300 * i },
];
const history = (rounds) => [{ role: "system", content: "You are a coding agent." }, ...Array.from({ length: rounds }, (_, i) => round(i)).flat()];

/** The call's answer, or its error's code and message. */
function outcome(f) {
  try {
    const r = f();
    return r?.messages === undefined ? r : { ...r, messages: JSON.parse(JSON.stringify(r.messages)) };
  } catch (e) {
    if (!(e instanceof CompactionError)) throw e;
    return { code: e.code, message: e.message };
  }
}

const CALLS = {
  measure: (h, o) => measure(h, { contextWindow: 6000, ...o }, "pending"),
  estimate: (h, o) => estimateTokens(h, o),
  recency: (h, o) => compactSync(h, { mode: "recency_preserving", contextWindow: 6000, ...o }),
  deterministic: (h, o) => compactSync(h, { mode: "deterministic", contextWindow: 6000, ...o }),
};

/** Every call on `h` answers as without the cache (each twice: the second continues the session). */
function agrees(h, options = {}, what = "") {
  for (const [name, call] of Object.entries(CALLS)) {
    for (let k = 0; k < 2; k++) {
      assert.deepEqual(outcome(() => call(h, options)), outcome(() => call(h, { ...options, cache: false })), `${what} ${name} (${k})`);
    }
  }
}

test("a growing history, a shrinking one, and two histories in turn answer as without the cache", () => {
  const a = history(6);
  const b = history(4).map((m) => structuredClone(m));
  agrees(a, {}, "a");
  agrees(b, {}, "b");
  for (let i = 6; i < 12; i++) {
    a.push(...round(i));
    agrees(a, {}, `a+${i}`);
    b.push(...round(i).map((m) => structuredClone(m)));
    agrees(b, {}, `b+${i}`);
  }
  // Back to fewer messages (an undo), then the compaction's own output as the history.
  a.splice(20);
  agrees(a, {}, "a shortened");
  const compacted = compactSync(a, { mode: "recency_preserving", contextWindow: 3000, protectTailMin: 4 }).messages;
  agrees([...compacted, { role: "user", content: "and now?" }], {}, "compacted");
});

test("another tokenizer, a forced format or a message edited in place at the start is not taken from the session", () => {
  const h = history(8);
  agrees(h);
  agrees(h, { tokenizer: "claude" }, "claude");
  agrees(h, { tokenizer: "cl100k" }, "cl100k");
  agrees(h, { format: "moltis" }, "forced");
  h[1].content = "Step 0: read src/other.rs instead.";
  agrees(h, {}, "first request edited");
  h[0] = { role: "system", content: "You are a careful coding agent." };
  agrees(h, {}, "system replaced");
});

test("a message written again by a call made inside the caller's getter is compared with what the session read", () => {
  const h = history(4);
  const b = h[1];
  let armed = false;
  // Reading the last message edits an earlier one and measures it on its own (a nested call).
  const last = {
    role: "user",
    get content() {
      if (armed) {
        armed = false;
        b.content = "Step 0: read src/changed_by_getter.rs.";
        estimateTokens([b]);
      }
      return "and then?";
    },
  };
  h.push(last);
  measure(h, { contextWindow: 6000 });
  armed = true;
  measure(h, { contextWindow: 6000 }); // the getter runs after `b` was sent from the session
  // `b` changed after the session read it; the nested call cached its new content.
  agrees(h, {}, "after the nested write");
});

test("a call that fails leaves the session holding what it held, and the next one answers as without the cache", () => {
  const h = history(3);
  agrees(h);
  const tiny = { role: "user", content: "x" };
  // Too small to compact at a huge window; then the history grows and fits the rules again.
  const huge = { mode: "recency_preserving", contextWindow: 1_000_000 };
  assert.throws(() => compactSync([...h, tiny], huge), (e) => e.code === "TOO_SMALL_TO_COMPACT");
  h.push(tiny, ...round(3));
  agrees(h, {}, "after the failure");
});

test("a provider's compaction boundary, a Responses history and every other format answer as without the cache", () => {
  const anthropic = [
    { role: "user", content: "Start." },
    ...Array.from({ length: 6 }, (_, i) => [
      { role: "assistant", content: [{ type: "text", text: `Step ${i} ` + body(i) }] },
      { role: "user", content: `go on ${i}` },
    ]).flat(),
  ];
  agrees(anthropic, {}, "anthropic");
  // The provider compacted: what came before counts nothing from now on.
  anthropic.push({ role: "assistant", content: [{ type: "compaction", content: "summary of before" }] }, { role: "user", content: "next" });
  agrees(anthropic, {}, "boundary");
  anthropic.push({ role: "assistant", content: [{ type: "text", text: "ok" }] }, { role: "user", content: "more" });
  agrees(anthropic, {}, "after the boundary");
  for (const [format, spec] of Object.entries(FORMATS)) {
    const h = spec.history(6);
    agrees(h, {}, format);
    h.push(...spec.history(8).slice(h.length));
    agrees(h, {}, `${format} grown`);
    agrees(spec.request(h), {}, `${format} request`);
  }
});

test("a request object answers as without the cache, whichever message key comes first", () => {
  const h = history(6);
  agrees({ model: "gpt-4o", messages: h, max_tokens: 500 }, {}, "request");
  h.push(...round(6));
  agrees({ model: "gpt-4o", messages: h, max_tokens: 500 }, {}, "request grown");
  // A request naming two message keys: wasm reads "messages"; "input" comes first in key order.
  agrees({ input: history(2), model: "gpt-4o", messages: h }, {}, "two keys");
  agrees({ input: history(2), model: "gpt-4o", messages: h }, {}, "two keys again");
});

test("a held message with a lone surrogate: what wasm writes from its text gets the surrogate back", () => {
  const h = history(8);
  for (const m of h) if (m.role === "user") m.content += " half an emoji: \uD83D.";
  const o = { mode: "recency_preserving", contextWindow: 3000, protectTailMin: 4 };
  measure(h, o);
  for (let k = 0; k < 3; k++) {
    const r = compactSync(h, o);
    const marker = r.messages.find((m) => !h.includes(m));
    assert.match(marker.content, /half an emoji: \uD83D\./, "the digest quotes the request as it was");
    assert.doesNotMatch(JSON.stringify(r.messages), /[\u{10F800}-\u{10FFFF}]/u);
    assert.deepEqual(outcome(() => r), outcome(() => compactSync(h, { ...o, cache: false })));
    h.push(...round(8 + k));
  }
});

test("calls that fail through the session do not pile their tapes up in wasm memory", async () => {
  const { initSync } = await import("../../pkg/chat_compaction.js");
  const memory = () => initSync({ module: new Uint8Array(0) }).memory.buffer.byteLength;
  const h = history(400);
  const bad = [...h, { role: "user", content: 42 }];
  measure(h);
  measure(h);
  for (let k = 0; k < 50; k++) assert.throws(() => measure(bad), { code: "INVALID_INPUT" });
  const before = memory();
  for (let k = 0; k < 1000; k++) assert.throws(() => measure(bad), { code: "INVALID_INPUT" });
  assert.ok(memory() - before < 2 << 20, `wasm memory grew by ${((memory() - before) / 2 ** 20).toFixed(1)} MB over 1,000 failed calls`);
  assert.deepEqual(outcome(() => measure(h)), outcome(() => measure(h, { cache: false })));
});

test("a call made again with every message written runs the caller's pin function once, and a pin getter's own call leaves the outer call's history alone", () => {
  const h = history(6);
  let calls = 0;
  const pin = (m, i) => (calls++, i === 5);
  compactSync(h, { mode: "recency_preserving", contextWindow: 3000, protectTailMin: 4, pin });
  compactSync(h, { mode: "recency_preserving", contextWindow: 3000, protectTailMin: 4, pin });
  // A Moltis notice: the history now reads as another format than the session's.
  const moltis = [...h, { role: "notice", content: "checkpoint" }];
  calls = 0;
  const r = compactSync(moltis, { mode: "recency_preserving", contextWindow: 3000, protectTailMin: 4, pin });
  assert.equal(calls, moltis.length, "the pin function ran once per message");
  assert.ok(r.messages.includes(h[5]), "the pinned message stays");
  // A getter of `pin` that measures another history of the same size while the outer call runs.
  const other = h.map((m) => ({ ...m, content: typeof m.content === "string" ? m.content.replace(/[a-z]/g, "x") : m.content }));
  measure(h);
  const options = { get pin() { measure(other); return undefined; } };
  assert.deepEqual(measure(h, options), measure(h, { cache: false }));
  assert.deepEqual(measure(h), measure(h, { cache: false }));
});

test("a head object made anew for every call keeps no copy of the whole history per message", async () => {
  const { setFlagsFromString } = await import("node:v8");
  const { runInNewContext } = await import("node:vm");
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const messages = [];
  gc();
  const before = process.memoryUsage().arrayBuffers;
  for (let i = 0; i < 600; i++) {
    messages.push({ role: i % 2 ? "assistant" : "user", content: `message ${i}: ` + "lorem ipsum dolor sit amet ".repeat(20) });
    const system = { role: "system", content: "You are a helpful assistant." };
    try {
      compactSync([system, ...messages], { mode: "recency_preserving", contextWindow: 200000 });
    } catch (e) {
      if (!(e instanceof CompactionError)) throw e;
    }
  }
  gc();
  const held = process.memoryUsage().arrayBuffers - before;
  // About 0.35 MB of text: its encoded form once, not once per message (a slab of each call was ≈ 60 MB in all).
  assert.ok(held < 8 << 20, `${(held / 2 ** 20).toFixed(1)} MB of buffers held for 600 messages`);
});
