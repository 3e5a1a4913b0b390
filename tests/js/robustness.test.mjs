// What a misbehaving summarizer, pin function or input cannot do: hang a
// compaction (a stream that never ends, a summarizer that never answers),
// change the caller's history, or make the library throw anything but a
// CompactionError with a code. The instance keeps working after each.
import { test, mock } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compact, compactIfNeeded, compactSync, measure, rebase, shouldCompact, CompactionError } from "../../pkg/node.js";
import { checkRules } from "./rules.mjs";

const sample = JSON.parse(readFileSync(new URL("../../examples/data/tau-bench-airline-3.json", import.meta.url), "utf8"));
const HEADINGS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps", "## Critical Context"];
const template = (goal) => HEADINGS.map((h) => (h === "## Goal" ? `${h}\n${goal}` : h === "## Progress" ? h : `${h}\n(none)`)).join("\n");
const base = { mode: "structured", contextWindow: 8000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Whether the instance still compacts after a failure. */
async function stillWorks() {
  const r = await compact(sample, { ...base, summarize: () => template("still working") });
  assert.equal(r.notice.mode, "structured");
  assert.equal(measure(sample).perMessage.length, sample.length);
}

/**
 * `promise`, or "still pending" when it has not settled after `ms` — only the
 * broken behaviour waits that long, and `stop` then ends what it left running.
 */
async function within(promise, ms, stop) {
  let timer;
  const pending = new Promise((r) => (timer = setTimeout(r, ms, "still pending")));
  try {
    return await Promise.race([promise, pending]);
  } finally {
    clearTimeout(timer);
    stop();
  }
}

test("a summary that streams forever is cut past twice maxSummaryTokens, closed, and falls back as an over-long one", async () => {
  const piece = "A fact worth keeping about the booking. ";
  const limit = 2 * 256 * 4; // twice maxSummaryTokens, in characters at about 4 a token
  for (const shape of ["async iterator", "ReadableStream"]) {
    let ended = false;
    const streams = [];
    const summarize = (request) => {
      const s = { read: 0, closed: false, signal: request.signal };
      streams.push(s);
      // (a macrotask between pieces, so that an endless read still lets the guard timer fire)
      const next = async () => (await sleep(0), (s.read += piece.length), piece);
      if (shape === "ReadableStream") {
        return new ReadableStream({ pull: async (c) => (ended ? c.close() : c.enqueue(await next())), cancel: () => (s.closed = true) });
      }
      return (async function* () {
        try {
          while (!ended) yield await next();
        } finally {
          s.closed = true;
        }
      })();
    };
    const stop = () => (ended = true);
    const structured = await within(compact(sample, { ...base, maxSummaryTokens: 256, summarize }), 5000, stop);
    assert.notEqual(structured, "still pending", `${shape}: compact settles without a timeoutMs`);
    assert.equal(structured.notice.fallback?.code, "QUALITY_CHECK", shape);
    assert.match(structured.notice.fallback.reason, /more than twice the 256 asked for/, shape);
    checkRules("openai", structured.messages);
    assert.equal(streams.length, 2, `${shape}: asked once more, as for any over-long summary`);
    await sleep(5);
    for (const s of streams) {
      assert.ok(s.closed, `${shape}: the stream is closed`);
      assert.ok(s.signal.aborted, `${shape}: the request's signal fires, so that a fetch stops too`);
      assert.ok(s.read > limit && s.read < 8 * limit, `${shape}: read ${s.read} characters, past the cap and not far`);
    }

    ended = false;
    streams.length = 0;
    const replace = within(compact(sample, { mode: "llm_replace", maxSummaryTokens: 256, summarize }), 5000, stop);
    await assert.rejects(replace, (e) => e instanceof CompactionError && e.code === "LLM_FAILED" && /more than twice the 256/.test(e.message), shape);
    await sleep(5);
    assert.ok(streams.length === 1 && streams[0].closed, shape);
  }
  await stillWorks();
});

test("the LLM modes time out after 120 s by default; timeoutMs: 0 waits as long as it takes", async (t) => {
  t.after(() => mock.timers.reset());
  mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const states = new Map();
  const watch = (name, promise) => {
    states.set(name, "pending");
    promise.then((v) => states.set(name, v), (e) => states.set(name, e));
  };
  let answer;
  watch("default", compact(sample, { ...base, summarize: () => new Promise(() => {}) }));
  watch("default llm_replace", compact(sample, { mode: "llm_replace", summarize: () => new Promise(() => {}) }));
  watch("no limit", compact(sample, { ...base, timeoutMs: 0, summarize: () => new Promise((r) => (answer = r)) }));
  // (a turn of the event loop runs every promise callback due; setImmediate is not mocked)
  const flush = () => new Promise((r) => setImmediate(r));
  mock.timers.tick(119_999);
  await flush();
  assert.equal(states.get("default"), "pending");
  mock.timers.tick(1);
  await flush();
  const fell = states.get("default");
  assert.equal(fell.notice?.fallback?.code, "TIMEOUT", String(fell));
  assert.match(fell.notice.fallback.reason, /within 120000 ms/);
  assert.ok(states.get("default llm_replace") instanceof CompactionError && states.get("default llm_replace").code === "LLM_FAILED");
  mock.timers.tick(30 * 24 * 3600 * 1000);
  await flush();
  assert.equal(states.get("no limit"), "pending", "timeoutMs: 0 sets no limit");
  answer(template("late, and still taken"));
  await flush();
  assert.equal(states.get("no limit").notice?.mode, "structured");
  mock.timers.reset();
  await assert.rejects(compact(sample, { ...base, timeoutMs: Infinity, summarize: () => "x" }), { code: "INVALID_CONFIG" });
  await stillWorks();
});

test("a stream of empty pieces cannot keep the timeout from firing", async () => {
  const end = Date.now() + 1000;
  const r = await compact(sample, {
    ...base,
    timeoutMs: 50,
    // (pieces that are all ready at once never let the timeout's timer run)
    summarize: async function* () {
      while (Date.now() < end) yield "";
      yield template("after a second of nothing");
    },
  });
  assert.equal(r.notice.fallback?.code, "TIMEOUT");
});

test("a summarizer that edits request.messages in place changes none of the caller's messages, and rebase works", async () => {
  for (const mode of ["structured", "llm_replace"]) {
    const history = structuredClone(sample.slice(1));
    const before = structuredClone(history);
    const seen = [];
    const summarize = (request) => {
      seen.push(JSON.stringify(request.messages));
      for (const m of request.messages) {
        m.content = "edited by the summarizer";
        m.role = "assistant";
        if (Array.isArray(m.tool_calls)) m.tool_calls[0].id = "edited";
      }
      request.messages.length = 1;
      return request.attempt === 1 && mode === "structured" ? "not the template" : template("the plan");
    };
    const r = await compact(history, { mode, contextWindow: 8000, summarize });
    assert.deepEqual(history, before, `${mode}: the caller's messages are unchanged`);
    assert.equal(r.notice.mode, mode);
    assert.ok(!seen.some((s) => s.includes("edited")), `${mode}: each attempt gets messages of its own`);
    // (what the summarizer was handed is the caller's messages, as they are)
    const handed = JSON.parse(seen[0]).filter((m) => history.some((h) => JSON.stringify(h) === JSON.stringify(m)));
    assert.ok(handed.length > 5, `${mode}: ${handed.length} of the caller's messages handed over as they are`);
    const next = rebase(r, [...history, { role: "user", content: "and then?" }]);
    assert.equal(next.at(-1).content, "and then?");
    checkRules("openai", next);
  }
  await stillWorks();
});

test("a summarizer that throws a null-prototype object, an object whose toString throws, or an Error whose message getter throws: LLM_FAILED with it as cause, and structured falls back", async () => {
  const oddities = {
    "a null-prototype object": () => Object.create(null),
    "an object whose toString throws": () => ({ toString() { throw new Error("no text"); } }),
    "an Error whose message getter throws": () => Object.defineProperty(new Error(), "message", { get() { throw new Error("no message"); } }),
  };
  for (const [name, make] of Object.entries(oddities)) {
    for (const [how, thrower] of [["throws", (v) => () => { throw v; }], ["rejects", (v) => async () => { throw v; }]]) {
      const odd = make();
      const r = await compact(sample, { ...base, summarize: thrower(odd) });
      assert.equal(r.notice.fallback?.code, "LLM_FAILED", `${name} (${how})`);
      assert.match(r.notice.fallback.reason, /^the summarizer failed/, `${name} (${how})`);
      checkRules("openai", r.messages);
      await assert.rejects(compact(sample, { mode: "llm_replace", summarize: thrower(odd) }), (e) => {
        assert.ok(e instanceof CompactionError, `${name} (${how})`);
        assert.equal(e.code, "LLM_FAILED");
        assert.equal(e.cause, odd, "the thrown value is the cause");
        return true;
      });
    }
  }
  await stillWorks();
});

test("a pendingText that cannot become text is INVALID_INPUT; a pin function that throws a null-prototype object is INVALID_CONFIG", async () => {
  const odd = Object.create(null);
  for (const [name, call] of [
    ["measure", () => measure(sample, {}, odd)],
    ["shouldCompact", () => shouldCompact(sample, {}, odd)],
    ["compactIfNeeded", () => compactIfNeeded(sample, {}, odd)],
  ]) {
    assert.throws(call, (e) => e instanceof CompactionError && e.code === "INVALID_INPUT" && /^pendingText: /.test(e.message) && e.cause instanceof TypeError, name);
  }
  assert.equal(measure(sample, {}, 42).perMessage.length, sample.length, "a number is still read as its text");
  const pin = () => { throw odd; };
  const checks = (e) => e instanceof CompactionError && e.code === "INVALID_CONFIG" && /^pin: the function threw/.test(e.message) && e.cause === odd;
  assert.throws(() => compactSync(sample, { mode: "recency_preserving", contextWindow: 8000, pin }), checks);
  await assert.rejects(compact(sample, { ...base, pin, summarize: () => template("x") }), checks);
  await stillWorks();
});

test("rebase given a Proxy whose get throws is INVALID_INPUT with the cause", async () => {
  const r = await compact(sample, { ...base, summarize: () => template("x") });
  const boom = new Error("revoked storage");
  const throwing = (target) => new Proxy(target, { get() { throw boom; } });
  for (const [name, call] of [
    ["as the result", () => rebase(throwing(r), sample)],
    ["as the history", () => rebase(r, throwing(sample.slice()))],
    ["as a request", () => rebase(r, throwing({ model: "gpt-4o", messages: sample }))],
    ["as an appended message", () => rebase(r, [...sample, throwing({ role: "user", content: "x" })])],
  ]) {
    assert.throws(call, (e) => e instanceof CompactionError && e.code === "INVALID_INPUT" && e.cause === boom, name);
  }
  // A covered message that cannot be read now cannot be the one compacted: it changed.
  assert.throws(() => rebase(r, sample.map((m, i) => (i === 3 ? throwing(m) : m))), (e) => e.code === "STALE_HISTORY" && /messages\[3\] changed/.test(e.message));
  assert.equal(rebase(r, [...sample, { role: "user", content: "next" }]).at(-1).content, "next");
  await stillWorks();
});

test("a pin function that returns a Promise is INVALID_CONFIG naming the mistake (it pinned everything)", async () => {
  const pin = async (m) => m.role === "user";
  const checks = (e) => e instanceof CompactionError && e.code === "INVALID_CONFIG" && /^pin: the function returned a Promise/.test(e.message);
  assert.throws(() => compactSync(sample, { mode: "recency_preserving", contextWindow: 8000, pin }), checks);
  await assert.rejects(compact(sample, { ...base, pin, summarize: () => template("x") }), checks);
  // (a rejected one is reported by the error, never left unhandled)
  const rejecting = () => Promise.reject(new Error("no pins today"));
  assert.throws(() => compactSync(sample, { mode: "recency_preserving", contextWindow: 8000, pin: rejecting }), checks);
  await stillWorks();
});
