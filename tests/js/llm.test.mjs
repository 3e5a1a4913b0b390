// The LLM modes through the built package (pkg/) in Node: every shape a summarizer
// may return, failures, timeouts, abort, concurrency and rebase.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { compact, compactSync, rebase, CompactionError } from "../../pkg/node.js";
import { checkRules } from "./rules.mjs";

const corpus = new URL("../../../shared/corpus/", import.meta.url);
const sample = JSON.parse(readFileSync(new URL("../../examples/data/tau-bench-airline-3.json", import.meta.url), "utf8"));
const HEADINGS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps", "## Critical Context"];

/** A summary in the template whose Goal is `goal`. */
function template(goal) {
  return HEADINGS.map((h) => (h === "## Goal" ? `${h}\n${goal}` : h === "## Progress" ? h : `${h}\n(none)`)).join("\n");
}

const base = { mode: "structured", contextWindow: 8000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const summaryOf = (r) => r.messages.find((m) => typeof m.content === "string" && m.content.startsWith("[Conversation Summary]"));

test("every shape a summarizer may return gives the same structured result", async () => {
  const text = template("book the flight — naïve café ✈️ 中文");
  const bytes = new TextEncoder().encode(text);
  const shapes = {
    string: () => text,
    promise: async () => text,
    object: () => ({ text, usage: { inputTokens: 1234, outputTokens: 567 } }),
    "object in a promise": async () => ({ text }),
    "async iterable": async function* () {
      for (let i = 0; i < text.length; i += 7) yield text.slice(i, i + 7);
    },
    "ReadableStream of strings": () => new ReadableStream({ start(c) { for (const part of text.split("\n")) c.enqueue(part + "\n"); c.close(); } }),
    // bytes split inside multi-byte characters
    "ReadableStream of bytes": () => new ReadableStream({ start(c) { for (let i = 0; i < bytes.length; i += 5) c.enqueue(bytes.slice(i, i + 5)); c.close(); } }),
  };
  const before = structuredClone(sample);
  for (const [name, summarize] of Object.entries(shapes)) {
    const r = await compact(sample, { ...base, summarize });
    assert.deepEqual(sample, before, `${name}: input untouched`);
    assert.equal(r.notice.mode, "structured", name);
    assert.equal(r.summary, text.trim(), `${name}: the summary as returned`);
    assert.ok(summaryOf(r).content.endsWith(text.trim()), name);
    checkRules("openai", r.messages);
    assert.deepEqual(r.messages.slice(0, 3), sample.slice(0, 3), `${name}: head verbatim`);
    assert.equal(r.messages.at(-1), sample.at(-1), `${name}: the tail holds the caller's own objects`);
    if (name === "object") assert.match(r.notice.text, /Used 1801 tokens \(1234 in \+ 567 out\)/);
    else assert.equal(r.notice.usageEstimated, true, name);
  }
});

test("the request: role-separated messages in the input's format, options passed through", async () => {
  let seen;
  const r = await compact(sample, { ...base, summaryModel: "gpt-4o-mini", maxSummaryTokens: 900, summarize: (req) => { seen = req; return template("x"); } });
  assert.equal(seen.mode, "structured");
  assert.equal(seen.model, "gpt-4o-mini");
  assert.equal(seen.maxTokens, 900);
  assert.ok(seen.signal instanceof AbortSignal && !seen.signal.aborted);
  assert.deepEqual(seen.messages[0], { role: "system", content: seen.system });
  assert.deepEqual(seen.messages.at(-1), { role: "user", content: seen.instruction });
  for (const h of HEADINGS) assert.ok(seen.instruction.includes(`\n${h}\n`), h);
  const middle = seen.messages.slice(1, -1);
  const caller = new Set(sample.map((m) => JSON.stringify(m)));
  assert.ok(middle.length > 5 && middle.every((m) => caller.has(JSON.stringify(m)) || m.role === "user"), "the caller's messages as they are");
  assert.ok(middle.every((m) => !sample.includes(m)), "copies: the summarizer may change them");
  checkRules("openai", seen.messages);
  assert.ok(r.notice.tokensAfter < r.notice.tokensBefore);
});

test("failures fall back to recency_preserving with the reason; llm_replace fails with the cause", async () => {
  const boom = new Error("provider down");
  const cases = {
    "throws": [() => { throw boom; }, "LLM_FAILED", /provider down/, boom],
    "rejects": [async () => { await sleep(1); throw boom; }, "LLM_FAILED", /provider down/, boom],
    "returns a number": [() => 42, "LLM_FAILED", /returned a number/, TypeError],
    "returns an object without text": [() => ({ summary: "x" }), "LLM_FAILED", /object without a text string/, TypeError],
    "streams numbers": [async function* () { yield 1; }, "LLM_FAILED", /yielded a number/, TypeError],
    "returns whitespace": [() => " \n ", "EMPTY_SUMMARY", /empty summary/, undefined],
    "fails the check twice": [() => "## Goal\nonly this", "QUALITY_CHECK", /quality check twice/, undefined],
    "never answers": [() => new Promise(() => {}), "TIMEOUT", /within 50 ms/, "TimeoutError"],
  };
  const before = structuredClone(sample);
  for (const [name, [summarize, code, reason, cause]] of Object.entries(cases)) {
    const r = await compact(sample, { ...base, summarize, timeoutMs: 50 });
    assert.equal(r.notice.mode, "recency_preserving", name);
    assert.equal(r.notice.requestedMode, "structured", name);
    assert.equal(r.notice.fallback.code, code, name);
    assert.match(r.notice.fallback.reason, reason, name);
    assert.match(r.notice.text, /Structured summary unavailable/, name);
    checkRules("openai", r.messages);
    assert.deepEqual(sample, before, name);

    const replace = compact(sample, { mode: "llm_replace", summarize, timeoutMs: 50 });
    if (code === "QUALITY_CHECK") {
      assert.equal((await replace).notice.mode, "llm_replace", "llm_replace has no template check");
      continue;
    }
    await assert.rejects(replace, (e) => {
      assert.ok(e instanceof CompactionError, name);
      assert.equal(e.code, code === "EMPTY_SUMMARY" ? "EMPTY_SUMMARY" : "LLM_FAILED", name);
      if (cause === boom) assert.equal(e.cause, boom, `${name}: the caller's own error is the cause`);
      else if (cause === TypeError) assert.ok(e.cause instanceof TypeError, name);
      else if (cause) assert.equal(e.cause?.name, cause, name);
      return true;
    });
    assert.deepEqual(sample, before, name);
  }
});

test("a timeout aborts the summarizer's signal; an abort rejects with ABORTED and never falls back", async () => {
  let signal;
  const late = await compact(sample, { ...base, timeoutMs: 20, summarize: (req) => { signal = req.signal; return new Promise(() => {}); } });
  assert.equal(signal.aborted, true, "the request's signal fires on timeout");
  assert.equal(signal.reason.name, "TimeoutError");
  // The request was sent: its input counts (estimated), no output.
  assert.ok(late.notice.compactionInputTokens > 0 && late.notice.compactionOutputTokens === 0 && late.notice.usageEstimated);
  assert.match(late.notice.text, /Used about \d+ tokens/);

  const early = new AbortController();
  early.abort(new Error("user left"));
  let called = false;
  await assert.rejects(compact(sample, { ...base, signal: early.signal, summarize: () => { called = true; return "x"; } }), (e) => e.code === "ABORTED" && e.cause.message === "user left");
  assert.equal(called, false, "aborted before the call: no call");

  const mid = new AbortController();
  let cancelled = false;
  const stream = new ReadableStream({
    start(c) { c.enqueue("## Goal\n"); },
    cancel() { cancelled = true; },
  });
  const pending = compact(sample, { ...base, signal: mid.signal, summarize: () => stream });
  await sleep(20);
  mid.abort();
  await assert.rejects(pending, (e) => e instanceof CompactionError && e.code === "ABORTED");
  await sleep(5);
  assert.equal(cancelled, true, "the stream is cancelled");

  const iterAbort = new AbortController();
  let returned = false;
  const iterable = {
    [Symbol.asyncIterator]() {
      return { next: () => new Promise(() => {}), return: () => { returned = true; return Promise.resolve({ done: true }); } };
    },
  };
  const p = compact(sample, { mode: "llm_replace", signal: iterAbort.signal, summarize: () => iterable });
  await sleep(10);
  iterAbort.abort();
  await assert.rejects(p, { code: "ABORTED" });
  await sleep(5);
  assert.equal(returned, true, "the iterator is closed");
});

test("options are checked: no summarizer, a summarizer that is not a function, a bad timeout or signal", async () => {
  await assert.rejects(compact(sample, { mode: "structured" }), (e) => e.code === "SUMMARIZER_REQUIRED" && /summarize/.test(e.message));
  // `summarize: null` is no summarizer, as leaving it out is
  await assert.rejects(compact(sample, { mode: "structured", summarize: null }), (e) => e.code === "SUMMARIZER_REQUIRED");
  await assert.rejects(compact(sample, { mode: "llm_replace", summarize: "gpt-4o" }), (e) => e.code === "INVALID_CONFIG" && /summarize: expected a function/.test(e.message));
  await assert.rejects(compact(sample, { ...base, summarize: () => "x", timeoutMs: -1 }), { code: "INVALID_CONFIG" });
  await assert.rejects(compact(sample, { ...base, summarize: () => "x", signal: {} }), { code: "INVALID_CONFIG" });
  assert.throws(() => compactSync(sample, { mode: "structured", summarize: () => "x" }), (e) => e.code === "SUMMARIZER_REQUIRED" && /await compact\(/.test(e.message));
  const r = await compact(sample, { mode: "recency_preserving", contextWindow: 8000 });
  assert.equal(r.notice.mode, "recency_preserving", "offline modes work through compact too");
});

test("concurrent compactions do not share state, and compactSync meanwhile is unaffected", async () => {
  const a = sample;
  const b = existsSync(corpus) ? JSON.parse(readFileSync(new URL("swecontext-8c0be6e5.openai.json", corpus), "utf8")) : sample.slice(1);
  const slow = (ms, goal) => async (req) => { await sleep(ms); return template(`${goal} ${req.messages.length}`); };
  const sequential = [await compact(a, { ...base, summarize: slow(0, "A") }), await compact(b, { ...base, summarize: slow(0, "B") })];
  const offline = compactSync(b, { mode: "recency_preserving", contextWindow: 8000 });
  // A resolves last, B first.
  const pa = compact(a, { ...base, summarize: slow(60, "A") });
  const pb = compact(b, { ...base, summarize: slow(10, "B") });
  await sleep(5);
  const during = compactSync(b, { mode: "recency_preserving", contextWindow: 8000 });
  const concurrent = await Promise.all([pa, pb]);
  assert.equal(JSON.stringify(concurrent), JSON.stringify(sequential));
  assert.equal(JSON.stringify(during), JSON.stringify(offline));
});

test("compaction covers the history as it was when it started; rebase splices what came since", async () => {
  const history = sample.slice();
  let release;
  const gate = new Promise((r) => { release = r; });
  const pending = compact(history, { ...base, summarize: async () => { await gate; return template("x"); } });
  // The user keeps chatting while the summary is written (same array, pushed to).
  history.push({ role: "user", content: "one more thing: also book a hotel" });
  history.push({ role: "assistant", content: "Sure, which city?" });
  release();
  const r = await pending;
  assert.equal(r.notice.messagesBefore, sample.length, "covers the messages present at the start");
  const next = rebase(r, history);
  assert.equal(next.length, r.messages.length + 2);
  assert.equal(next.at(-1), history.at(-1), "appended messages are the caller's objects");
  checkRules("openai", next);
  // Equal content in new objects is fine; changes, removals and orphans are not.
  assert.equal(rebase(r, structuredClone(history)).length, next.length);
  const edited = history.slice();
  edited[5] = { ...edited[5], content: "edited" };
  assert.throws(() => rebase(r, edited), (e) => e.code === "STALE_HISTORY" && /messages\[5\] changed/.test(e.message));
  assert.throws(() => rebase(r, history.slice(0, 3)), (e) => e.code === "STALE_HISTORY" && /fewer/.test(e.message));
  assert.throws(() => rebase(JSON.parse(JSON.stringify(r)), history), { code: "INVALID_INPUT" });
  // A request object comes back as a request.
  const req = { model: "gpt-4o", messages: history };
  assert.deepEqual(rebase(r, req).messages, next);
  assert.equal(rebase(r, req).model, "gpt-4o");
});

test("rebase refuses to split a tool pair at the seam", async () => {
  // The call was answered, and summarized away with its answer; a second answer
  // to it arrives after the compaction started: it has nothing to attach to.
  const h = [
    { role: "user", content: "check the weather" },
    { role: "assistant", content: null, tool_calls: [{ id: "w1", type: "function", function: { name: "weather", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "w1", content: "sunny (partial)" },
  ];
  const r = compactSync(h, { mode: "deterministic" });
  const later = [...h, { role: "tool", tool_call_id: "w1", content: "sunny" }];
  // (named by its place in the caller's current history)
  assert.throws(() => rebase(r, later), (e) => e.code === "STALE_HISTORY" && /^messages\[3\] answers tool call "w1"/.test(e.message));
  // A call still running when the compaction started stays after the summary: its result attaches.
  const running = h.slice(0, 2);
  const summarized = compactSync(running, { mode: "deterministic" });
  checkRules("openai", rebase(summarized, [...running, { role: "tool", tool_call_id: "w1", content: "sunny" }]));
  // recency_preserving keeps the pending call in its tail, so the result attaches.
  const long = [...sample, ...running];
  const kept = compactSync(long, { mode: "recency_preserving", contextWindow: 8000 });
  const next = rebase(kept, [...long, { role: "tool", tool_call_id: "w1", content: "sunny" }]);
  checkRules("openai", next);
});

test("every format, with both LLM modes", { skip: !existsSync(corpus) && !process.env.REQUIRE_CORPUS && "../shared/corpus is not there" }, async () => {
  for (const format of ["openai", "anthropic", "moltis"]) {
    const input = JSON.parse(readFileSync(new URL(`swecontext-5558c6aa.${format}.json`, corpus), "utf8"));
    const before = structuredClone(input);
    for (const mode of ["structured", "llm_replace"]) {
      let seen;
      const r = await compact(input, { mode, contextWindow: 16000, summarize: (req) => { seen = req; return template("fix the bug"); } });
      assert.deepEqual(input, before);
      checkRules(format, r.messages);
      checkRules(format === "anthropic" ? "anthropic" : "openai", seen.messages);
      if (format === "anthropic") {
        assert.ok(seen.messages.every((m) => m.role !== "system"));
        assert.equal(r.request.system, input.system);
      } else {
        assert.equal(seen.messages[0].role, "system");
      }
      assert.equal(r.notice.format, format);
      assert.equal(r.notice.mode, mode);
    }
  }
});

test("structured calls no LLM when nothing new lies between head and tail (only the earlier summary)", async () => {
  const chat = Array.from({ length: 80 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `turn ${i}: ` + "a plain sentence of this chat. ".repeat(12) }));
  const options = { mode: "structured", contextWindow: 8000, protectHead: 2, protectTailMin: 4 };
  const first = await compact(chat, { ...options, summarize: () => template("the plan") });
  assert.equal(first.notice.mode, "structured");
  let calls = 0;
  await assert.rejects(
    compact(first.messages, { ...options, summarize: () => (calls++, template("again")) }),
    (e) => e.code === "TOO_SMALL_TO_COMPACT" && /nothing new lies between head and tail/.test(e.message),
  );
  assert.equal(calls, 0, "no summarizer call for nothing new");
});

test("an abort between two answers, or with the last one, still rejects with ABORTED", async () => {
  const history = sample.slice(1);
  const between = new AbortController();
  await assert.rejects(
    compact(history, {
      ...base,
      signal: between.signal,
      summarize: (request) => {
        // The first answer fails the quality check; the caller aborts while it is handed back.
        if (request.attempt === 1) queueMicrotask(() => between.abort(new Error("Cancel")));
        return request.attempt === 1 ? "no template here" : template("late");
      },
    }),
    (e) => e.code === "ABORTED",
  );
  const last = new AbortController();
  await assert.rejects(
    compact(history, { ...base, signal: last.signal, summarize: async function* () { yield template("streamed"); last.abort(new Error("Cancel")); } }),
    (e) => e.code === "ABORTED",
  );
});

test("a summary or option cut inside a surrogate pair is read with U+FFFD in its place", async () => {
  const cut = (template("ship the release") + " 🚀").slice(0, -1); // ends in half of a pair
  for (const mode of ["structured", "llm_replace"]) {
    const r = await compact(sample.slice(1), { ...base, mode, summaryModel: "model-\uD800", summarize: () => cut });
    assert.equal(r.notice.mode, mode);
    assert.ok(r.summary.endsWith("\uFFFD"), mode);
  }
});

test("llm_replace refuses a summary more than twice maxSummaryTokens; a bound below 256 is raised", async () => {
  const history = sample.slice(1);
  await assert.rejects(
    compact(history, { mode: "llm_replace", maxSummaryTokens: 500, summarize: () => "a fact worth keeping. ".repeat(2000) }),
    (e) => e.code === "LLM_FAILED" && /more than twice the 500/.test(e.message),
  );
  let asked;
  const r = await compact(history, { mode: "llm_replace", maxSummaryTokens: 0, summarize: (q) => ((asked = q.maxTokens), "short and sweet") });
  assert.equal(asked, 256);
  assert.ok(r.warnings.some((w) => w.code === "CLAMPED" && /max_?[sS]ummary_?[tT]okens/.test(w.message)), JSON.stringify(r.warnings));
});

/** A history whose last message is the assistant's reply, still streaming, and a compaction gated on `release`. */
function streaming() {
  const history = structuredClone(sample.slice(1));
  history.push({ role: "assistant", content: "Your booking is" });
  let release;
  const gate = new Promise((r) => (release = r));
  // (compact reads the history before it first awaits: what follows happens during the compaction)
  const pending = compact(history, { ...base, summarize: () => gate });
  return { history, pending, release };
}

test("a reply streaming into the last message during a compaction: rebase takes its current version and keeps the summary", async () => {
  // In place, as a chat UI appends each piece to the message object.
  const inPlace = streaming();
  const reply = inPlace.history.at(-1);
  reply.content += " confirmed: flight HAT001, seat 12A.";
  inPlace.release(template("the booking"));
  const r = await inPlace.pending;
  assert.equal(r.notice.mode, "structured");
  const next = rebase(r, [...inPlace.history, { role: "user", content: "thanks" }]);
  assert.ok(next.includes(summaryOf(r)), "the summary is kept");
  assert.equal(next.at(-2), reply, "the reply is the caller's object");
  assert.equal(next.at(-2).content, "Your booking is confirmed: flight HAT001, seat 12A.");
  assert.equal(next.at(-1).content, "thanks");
  checkRules("openai", next);
  // A new object each piece, as immutable state (React, Redux) replaces it.
  const replaced = streaming();
  const before = replaced.history.at(-1);
  replaced.history[replaced.history.length - 1] = { ...before, content: `${before.content} confirmed.` };
  replaced.release(template("the booking"));
  const r2 = await replaced.pending;
  const next2 = rebase(r2, replaced.history);
  assert.equal(next2.at(-1), replaced.history.at(-1), "the current object, not the one the compaction saw");
  assert.equal(next2.length, r2.messages.length);
  // Any message the result keeps verbatim (the head too) is taken as it is now.
  const head = [...replaced.history];
  head[0] = { ...head[0], content: "Hi! I need to change a flight (typo fixed)." };
  assert.equal(rebase(r2, head)[0], head[0]);
});

test("rebase: a change to a message the summary covers is STALE_HISTORY, whether in place or a new object", async () => {
  const { history, pending, release } = streaming();
  const covered = history[20];
  covered.content = `${covered.content} (edited)`;
  release(template("the booking"));
  const r = await pending;
  assert.equal(r.notice.mode, "structured");
  assert.ok(!r.messages.includes(covered), "messages[20] is one the summary covers");
  assert.throws(() => rebase(r, history), (e) => e.code === "STALE_HISTORY" && /^messages\[20\] changed since the compaction started/.test(e.message));
  // The same with an offline mode's marker.
  const offline = structuredClone(sample.slice(1));
  const marked = compactSync(offline, { mode: "recency_preserving", contextWindow: 8000 });
  const edited = offline.map((m, i) => (i === 20 ? { ...m, content: "edited" } : m));
  assert.throws(() => rebase(marked, edited), (e) => e.code === "STALE_HISTORY" && /^messages\[20\] changed/.test(e.message));
});

test("rebase: a message the result keeps that changed into a result of a call compacted away breaks the seam", async () => {
  const { history, pending, release } = streaming();
  const gone = history.slice(0, 39).findLast((m) => m.tool_calls).tool_calls[0].id;
  history[history.length - 1] = { role: "tool", tool_call_id: gone, content: "late" };
  release(template("the booking"));
  const r = await pending;
  assert.throws(() => rebase(r, history), (e) => e.code === "STALE_HISTORY" && new RegExp(`^messages\\[${history.length - 1}\\] answers tool call "${gone}"`).test(e.message));
});

test("rebase: a history reloaded with its keys in another order is the same history (LLM and offline modes)", async () => {
  /** `v` as a JSON store that orders keys its own way gives it back. */
  const reordered = (v) => (v === null || typeof v !== "object" ? v : Array.isArray(v) ? v.map(reordered) : Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reordered(x)])));
  const history = structuredClone(sample.slice(1));
  const reloaded = reordered(history);
  assert.notEqual(JSON.stringify(reloaded[20]), JSON.stringify(history[20]), "the keys are in another order");
  const r = await compact(history, { ...base, summarize: () => template("the booking") });
  const offline = compactSync(history, { mode: "recency_preserving", contextWindow: 8000 });
  for (const [name, result] of [["structured", r], ["recency_preserving", offline]]) {
    const next = rebase(result, [...reloaded, { role: "user", content: "and a hotel?" }]);
    assert.equal(next.length, result.messages.length + 1, name);
    assert.equal(next.at(-2), reloaded.at(-1), `${name}: the kept messages as reloaded`);
    const edited = reloaded.map((m, i) => (i === 20 ? { ...m, content: "edited" } : m));
    assert.throws(() => rebase(result, edited), (e) => e.code === "STALE_HISTORY" && /^messages\[20\] changed/.test(e.message), name);
  }
});

test("options: a JS-only option given in two spellings must agree; a throwing getter is INVALID_CONFIG; only system messages are EMPTY_HISTORY in every mode", async () => {
  const history = sample.slice(1);
  await assert.rejects(compact(history, { ...base, timeoutMs: 10000, timeout_ms: 1, summarize: () => template("x") }), (e) => e.code === "INVALID_CONFIG" && /timeoutMs and timeout_ms/.test(e.message));
  assert.throws(() => compactSync(history, { get mode() { throw new Error("boom"); } }), (e) => e.code === "INVALID_CONFIG" && /boom/.test(e.message));
  const system = [{ role: "system", content: "You are helpful." }];
  for (const mode of ["deterministic", "recency_preserving", "structured", "llm_replace"]) {
    await assert.rejects(compact(system, { mode, summarize: () => template("x") }), (e) => e.code === "EMPTY_HISTORY", mode);
  }
  // Pins that hold everything are named as what covers it.
  assert.throws(() => compactSync(history, { ...base, mode: "recency_preserving", pinRoles: ["user", "assistant", "tool"] }), (e) => e.code === "TOO_SMALL_TO_COMPACT" && /pinned messages already cover all of it/.test(e.message) && /pin fewer/.test(e.message));
});

test("a timeout beyond what timers take (2^31 − 1 ms, about 25 days) waits as long as it says", async () => {
  for (const timeoutMs of [2 ** 31, 3e9, Number.MAX_SAFE_INTEGER]) {
    const r = await compact(sample, { ...base, timeoutMs, summarize: async () => (await sleep(20), template("late but in time")) });
    assert.equal(r.notice.mode, "structured", `${timeoutMs}: ${r.notice.fallback?.reason}`);
    const replaced = await compact(sample, { mode: "llm_replace", timeoutMs, summarize: async () => (await sleep(20), "the summary") });
    assert.equal(replaced.notice.mode, "llm_replace", String(timeoutMs));
  }
});
