// The context meter (`measure`) through the built package in Node: what a
// request spends besides its messages, the model's window, the pending text,
// and the effective options in the notice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { compactSync, estimateTokens, measure, parseConfig, shouldCompact, CompactionError } from "../../pkg/node.js";
import { FORMATS } from "./histories.mjs";

const corpus = new URL("../../../shared/corpus/", import.meta.url);

const history = [{ role: "system", content: "You are terse." }];
for (let i = 0; i < 30; i++) {
  history.push({ role: "user", content: `question ${i}: ${"what about the parser ".repeat(i % 7 === 0 ? 60 : 5)}` });
  history.push({ role: "assistant", content: `answer ${i}: it reads the tokens one by one.` });
}
history.push({ role: "user", content: "and now?" });

const tools = [
  {
    type: "function",
    function: {
      name: "search",
      description: "Searches the code base.",
      parameters: { type: "object", properties: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`p${i}`, { type: "string", description: `what parameter ${i} means` }])) },
    },
  },
];

test("perMessage adds up to tokens and shows the heaviest messages", () => {
  const m = measure(history, { contextWindow: 10000 });
  assert.equal(m.format, "openai");
  assert.equal(m.perMessage.length, history.length);
  assert.equal(m.tokens, m.perMessage.reduce((a, b) => a + b, 0));
  assert.equal(m.tokens, estimateTokens(history));
  assert.equal(m.threshold, 9500);
  assert.equal(m.fraction, m.tokens / 10000);
  assert.equal(m.shouldCompact, m.tokens >= m.threshold);
  const heaviest = m.perMessage.indexOf(Math.max(...m.perMessage));
  assert.ok(history[heaviest].content.length > 1000, "the heaviest message is a long one");
  const pending = measure(history, { contextWindow: 10000 }, "one more thing");
  assert.ok(pending.pendingTokens > 0);
  assert.equal(pending.tokens, m.tokens + pending.pendingTokens);
});

test("a request's tools, max tokens and model count", () => {
  const request = { model: "gpt-4o-mini", messages: history, tools, max_completion_tokens: 16000 };
  const m = measure(request);
  assert.equal(m.windowSource, "model");
  assert.equal(m.contextWindow, 128000);
  assert.equal(m.reservedOutputTokens, 16000);
  assert.equal(m.threshold, Math.round((128000 - 16000) * 0.95));
  assert.ok(m.toolsTokens > 500, `a 3,000-character schema costs hundreds of tokens (${m.toolsTokens})`);
  assert.equal(m.tokens, m.toolsTokens + m.perMessage.reduce((a, b) => a + b, 0));
  assert.equal(m.options.contextWindow, 128000);
  // The caller's window wins over the table.
  assert.equal(measure(request, { contextWindow: 9000 }).windowSource, "option");
  // shouldCompact is the meter's boolean.
  const tight = { contextWindow: m.tokens + 16000 };
  assert.equal(shouldCompact(request, tight), true);
  assert.equal(measure(request, tight).shouldCompact, true);
});

test("the notice carries the effective options, and compaction makes room for the tools", () => {
  const request = { model: "gpt-4", messages: history, tools, max_tokens: 500 };
  const r = compactSync(request, { mode: "recency_preserving" });
  assert.equal(r.notice.format, "openai");
  assert.equal(r.notice.options.contextWindow, 8192);
  assert.equal(r.notice.options.reserveOutputTokens, 500);
  assert.equal(r.notice.options.mode, "recency_preserving");
  const after = measure(r.request);
  assert.ok(after.toolsTokens > 0 && after.tokens <= after.threshold, `${after.tokens} ≤ ${after.threshold}`);
  assert.equal(after.tokens, r.notice.tokensAfter);
});

test("a custom counter is used for every part", () => {
  const m = measure({ messages: history, tools }, { countTokens: () => 1 });
  assert.ok(m.perMessage.every((t) => t === 5), "1 token of text + 4 of framing per message");
  assert.ok(m.toolsTokens >= 1);
});

// ---- The per-message estimate cache ------------------------------------------------

const fresh = () => structuredClone(history);
const uncached = (h, o = {}) => measure(h, { ...o, cache: false });

/** Deep-freezes `v` (as Immer and Redux Toolkit leave state). */
const deepFreeze = (v) => {
  if (v !== null && typeof v === "object") {
    Object.values(v).forEach(deepFreeze);
    Object.freeze(v);
  }
  return v;
};

test("a compaction keeps a history only once it has seen it; the meter keeps what it reads", () => {
  // A frozen message behind a Proxy: a cache hit reads nothing of it (see below).
  let reads = 0;
  const watched = (content) => new Proxy(deepFreeze({ role: "assistant", content }), { get: (t, k, r) => (reads++, Reflect.get(t, k, r)) });
  const readsOf = (f) => ((reads = 0), f(), reads);
  const compact = (h, o = {}) => compactSync(h, { mode: "deterministic", ...o });
  const h = [{ role: "user", content: "hi" }, watched("the answer"), { role: "user", content: "and?" }];
  assert.ok(readsOf(() => compact(h)) > 0, "first compaction: written, nothing kept");
  assert.ok(readsOf(() => compact(h)) > 0, "second: written again, now kept");
  assert.equal(readsOf(() => compact(h)), 0, "third: taken from the cache");
  // The meter keeps at once: the compaction after it (the Worker proxy's order) hits.
  const metered = [{ role: "user", content: "hi" }, watched("metered"), { role: "user", content: "next" }];
  assert.ok(readsOf(() => measure(metered)) > 0);
  assert.equal(readsOf(() => compact(metered)), 0, "kept by the meter");
  // Requests made anew around one constant message (a server's system prompt):
  // the constant head does not turn the cache on.
  const SYSTEM = deepFreeze({ role: "system", content: "Be brief." });
  const next = () => [SYSTEM, watched("fresh"), { role: "user", content: "q" }];
  compact(next());
  const again = next();
  assert.ok(readsOf(() => compact(again)) > 0);
  assert.ok(readsOf(() => compact(again)) > 0, "kept only from its own second call");
  assert.equal(readsOf(() => compact(again)), 0);
  // A head made anew for each call in front of a kept history does not keep it out.
  const kept = [watched("one"), watched("two"), watched("three")];
  const withHead = () => [{ role: "system", content: "made for this call" }, ...kept];
  compact(withHead());
  compact(withHead());
  assert.equal(readsOf(() => compact(withHead())), 0);
  // `cache: false` neither reads the cache nor marks a history as seen.
  const solo = [{ role: "user", content: "x" }, watched("y"), { role: "user", content: "z" }];
  compact(solo, { cache: false });
  compact(solo);
  assert.ok(readsOf(() => compact(solo)) > 0, "its first cached compaction only marked it");
});


test("a warm call answers what an uncached one does, on corpus-like histories and every mode", () => {
  const h = fresh();
  for (let round = 0; round < 3; round++) {
    h.push({ role: "assistant", content: `round ${round}: ${"reading the file again ".repeat(40)}` }, { role: "user", content: `next ${round}` });
    for (const options of [{ contextWindow: 3000 }, { contextWindow: 3000, tokenizer: "claude" }]) {
      assert.deepEqual(measure(h, options), uncached(h, options));
      for (const mode of ["deterministic", "recency_preserving"]) {
        const warm = compactSync(h, { ...options, mode });
        assert.deepEqual(warm, compactSync(h, { ...options, mode, cache: false }), `${mode} round ${round}`);
      }
    }
  }
});

test("a message edited in place is estimated again (a streaming reply)", () => {
  const h = fresh();
  const reply = { role: "assistant", content: "" };
  h.push(reply);
  measure(h);
  for (const chunk of ["The parser", " reads tokens", " one by one, and then ".repeat(30)]) {
    reply.content += chunk;
    assert.deepEqual(measure(h), uncached(h), `after ${JSON.stringify(chunk.slice(0, 12))}`);
  }
  // Same length, other characters at the ends; a tool call added; a key removed.
  reply.content = `X${reply.content.slice(1, -1)}Y`;
  assert.deepEqual(measure(h), uncached(h));
  reply.tool_calls = [{ id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a.rs"}' } }];
  h.push({ role: "tool", tool_call_id: "c1", content: "fn main() {}\n".repeat(50) });
  assert.deepEqual(measure(h), uncached(h));
  h[h.length - 1].content = "short";
  assert.deepEqual(measure(h), uncached(h));
});

test("replaced, frozen and reused objects, and arrays refilled with other messages", () => {
  const h = fresh();
  const before = measure(h);
  const replaced = h.map((m) => ({ ...m }));
  assert.deepEqual(measure(replaced), before);
  const frozen = Object.freeze(h.map((m) => Object.freeze({ ...m })));
  assert.deepEqual(measure(frozen), before);
  assert.deepEqual(measure(frozen), uncached(frozen));
  // One array, refilled with other messages between calls.
  const reused = fresh();
  measure(reused);
  reused.length = 0;
  reused.push({ role: "user", content: "a completely different conversation" }, { role: "assistant", content: "indeed" });
  assert.deepEqual(measure(reused), uncached(reused));
  // The same message object in two places, and in two histories.
  const shared = { role: "user", content: "shared ".repeat(100) };
  const a = [shared, { role: "assistant", content: "ok" }, shared];
  assert.deepEqual(measure(a), uncached(a));
  assert.deepEqual(measure([shared]), uncached([shared]));
  // A different tokenizer is not answered from the o200k estimates.
  assert.deepEqual(measure(h, { tokenizer: "cl100k" }), uncached(h, { tokenizer: "cl100k" }));
});

test("a caller's counter is never answered from the cache", () => {
  const h = fresh();
  let per = 1;
  const countTokens = () => per;
  const first = measure(h, { countTokens });
  per = 2;
  const second = measure(h, { countTokens });
  assert.ok(second.tokens > first.tokens, "the counter's new answers count");
});

test("the cache compares only a message's own keys, as the writer writes them: a property moved to the prototype is a change, a prototype getter is never run", () => {
  const long = "word ".repeat(400);
  const m = { role: "user", content: long };
  const h = [m];
  measure(h, { contextWindow: 100000 });
  delete m.content;
  Object.setPrototypeOf(m, { content: long });
  assert.throws(() => measure(h, { contextWindow: 100000 }), { code: "INVALID_INPUT" });
  assert.throws(() => measure(h, { contextWindow: 100000, cache: false }), { code: "INVALID_INPUT" });

  class Part {
    get boom() {
      throw new Error("a prototype getter was run");
    }
  }
  Object.defineProperty(Part.prototype, "boom", { enumerable: true });
  const part = Object.assign(new Part(), { type: "text", text: "hello there" });
  const parts = [{ role: "user", content: [part] }];
  const cold = measure(parts);
  assert.deepEqual(measure(parts), cold);
});

test("an enumerable property put on Object.prototype changes no answer of the cache", () => {
  const h = fresh();
  measure(h);
  Object.prototype.pollutedForTheTest = "x";
  try {
    h[1] = { ...h[1], content: `${h[1].content} and more` };
    h[2].content += " (edited in place)";
    assert.deepEqual(measure(h), uncached(h));
    h[3].content += " (edited again)";
    assert.deepEqual(measure(h), uncached(h));
    assert.deepEqual(compactSync(h, { mode: "recency_preserving", contextWindow: 3000 }), compactSync(h, { mode: "recency_preserving", contextWindow: 3000, cache: false }));
  } finally {
    delete Object.prototype.pollutedForTheTest;
  }
});

test("an edit anywhere in a string is seen, even one that keeps its length and its first, middle and last characters", () => {
  const h = fresh();
  const m = { role: "user", content: `a${"word ".repeat(200)}z` };
  h.push(m);
  const first = measure(h).perMessage.at(-1);
  // Same length, same first, middle and last characters: words become one long run.
  const mid = m.content.length >> 1;
  m.content = m.content.slice(0, mid).replace(/ /g, "-") + m.content[mid] + m.content.slice(mid + 1).replace(/ /g, "-");
  const edited = measure(h).perMessage.at(-1);
  assert.notEqual(edited, first);
  assert.equal(edited, uncached(h).perMessage.at(-1));
  assert.deepEqual(compactSync(h, { mode: "deterministic" }), compactSync(h, { mode: "deterministic", cache: false }));
});

test("on the corpus, cached and uncached calls agree in every format, after growth and edits", { skip: !existsSync(corpus) && !process.env.REQUIRE_CORPUS && "../shared/corpus is not there" }, () => {
  for (const name of readdirSync(corpus).filter((f) => /^swecontext-.*\.(openai|anthropic|moltis)\.json$/.test(f)).slice(0, 9)) {
    const input = JSON.parse(readFileSync(new URL(name, corpus), "utf8"));
    const messages = Array.isArray(input) ? input : input.messages;
    const grow = (n) => (Array.isArray(input) ? messages.slice(0, n) : { ...input, messages: messages.slice(0, n) });
    for (const n of [Math.floor(messages.length / 2), messages.length - 1, messages.length]) {
      const h = grow(n);
      for (const mode of ["deterministic", "recency_preserving"]) {
        const options = { mode, contextWindow: 6000 };
        let uncachedResult;
        try {
          uncachedResult = compactSync(h, { ...options, cache: false });
        } catch (e) {
          assert.throws(() => compactSync(h, options), { code: e.code }, `${name}[..${n}] ${mode}: the same error`);
          continue;
        }
        assert.deepEqual(compactSync(h, options), uncachedResult, `${name}[..${n}] ${mode}`);
      }
      assert.deepEqual(measure(h), uncached(h), `${name}[..${n}] measure`);
    }
    // An edit in place to a message the cache holds: a longer text.
    const last = messages.at(-1);
    const copy = structuredClone(last);
    messages[messages.length - 1] = copy;
    measure(grow(messages.length));
    if (typeof copy.content === "string") copy.content += " (edited)";
    else copy.edited = true;
    assert.deepEqual(measure(grow(messages.length)), uncached(grow(messages.length)), `${name}: edited in place`);
  }
});

test("every JSON shape walks the same when written and when checked: a warm call hits, reading the message once", () => {
  const text = `b${"word ".repeat(200)}y`;
  let reads = 0;
  const m = {
    role: "assistant",
    get content() {
      reads++;
      return text;
    },
    tool_calls: [{ id: "c9", type: "function", function: { name: "read", arguments: '{"path":"a.rs","n":3}' } }],
    extra: { n: 1.5, big: 2 ** 40, neg: -3, nan: NaN, ok: true, no: false, none: null, skipped: undefined, fn() {}, at: new Date(0), list: [1, "two", null, undefined, [true]] },
  };
  const h = [{ role: "user", content: "hi" }, m, { role: "tool", tool_call_id: "c9", content: "ok" }];
  const first = measure(h);
  assert.equal(reads, 1, "written once");
  assert.deepEqual(measure(h), first);
  // A hit reads the message once to compare it; a miss would read it again to write it.
  assert.equal(reads, 2, "compared once, not written again");
});

test("a countTokens that answers a Promise is INVALID_CONFIG saying it must be synchronous", () => {
  const h = fresh();
  assert.throws(
    () => measure(h, { countTokens: async () => 1 }),
    (e) => e.code === "INVALID_CONFIG" && /must answer synchronously/.test(e.message) && e.cause instanceof TypeError,
  );
  assert.throws(() => measure(h, { countTokens: () => Promise.reject(new Error("no")) }), { code: "INVALID_CONFIG" });
});

test("a call from inside a getter during a large encoding leaves the outer tape and the cache intact", () => {
  const first = { role: "user", content: "hello world ".repeat(1_500_000) };
  const tricky = {
    role: "assistant",
    get content() {
      estimateTokens([{ role: "user", content: "x" }]);
      return "ok";
    },
  };
  const h = [first, tricky];
  assert.equal(estimateTokens(h), estimateTokens(h, { cache: false }));
  const again = [first, { role: "assistant", content: "ok" }];
  assert.equal(estimateTokens(again), estimateTokens(again, { cache: false }));
  // A compaction copies the cached segment itself (the meter sends a stub).
  const options = { mode: "deterministic", contextWindow: 100000 };
  assert.deepEqual(compactSync(again, options), compactSync(again, { ...options, cache: false }));
});

test("an array's length is read once, whatever a Proxy answers later: cached and uncached calls agree", () => {
  let reads = 0;
  const parts = [{ type: "text", text: "alpha ".repeat(40) }, { type: "text", text: "beta ".repeat(40) }];
  // Answers 2 for its first two reads in a call, then 1.
  const content = new Proxy(parts, { get: (t, k, r) => (k === "length" ? (++reads <= 2 ? 2 : 1) : Reflect.get(t, k, r)) });
  const h = [{ role: "system", content: "s" }, { role: "user", content }];
  const per = (o) => ((reads = 0), measure(h, o).perMessage);
  for (let call = 0; call < 3; call++) assert.deepEqual(per(), per({ cache: false }), `call ${call}`);
});

test("an estimate is kept per format: the same object read as another format is estimated again", () => {
  const m = { role: "user", content: [{ type: "input_text", text: "word ".repeat(2000) }] };
  for (const format of ["openai", "anthropic", "openai"]) {
    assert.equal(estimateTokens([m], { format }), estimateTokens([m], { format, cache: false }), format);
  }
});

test("a root whose toJSON answers the history is read as that history", () => {
  const messages = [{ role: "user", content: "hello" }, { role: "assistant", content: "hi" }];
  const r = compactSync({ toJSON: () => messages }, { mode: "deterministic" });
  assert.equal(r.request, undefined);
  assert.equal(r.notice.messagesBefore, 2);
});

test("records made by a call that ends in an error stand for the right messages (a Worker's TOO_SMALL then the meter)", () => {
  const h = [
    { role: "user", content: `c${"word ".repeat(300)}q` },
    { role: "assistant", content: "ok" },
    { role: "user", content: "a short one" },
  ];
  // (the first compaction of a history keeps nothing; the second keeps its records)
  for (let call = 0; call < 2; call++) assert.throws(() => compactSync(h, { mode: "recency_preserving" }), { code: "TOO_SMALL_TO_COMPACT" });
  // The meter now sends all three as stubs, each standing on the record the failed call kept.
  assert.deepEqual(measure(h), uncached(h));
  assert.deepEqual(estimateTokens(h), estimateTokens(h, { cache: false }));
});

// Known messages go to wasm as stubs for `measure` and `estimateTokens` (src/memo.rs):
// their view is rebuilt from the cached record, so these tests check that a stubbed
// call answers what a fully written one does.

test("a stubbed meter answers what an uncached one does, in every format, arrays and requests", () => {
  const anthropic = [
    { role: "user", content: "Read a.rs" },
    { role: "assistant", content: [{ type: "thinking", thinking: "hm", signature: "s1" }, { type: "tool_use", id: "t1", name: "read", input: { path: "a.rs" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "fn main() {}".repeat(40) }] },
    { role: "assistant", content: "Done.", requestInputTokens: 1234 },
  ];
  const moltis = [
    { role: "user", content: "hi", created_at: 1 },
    { role: "notice", content: "compacted", created_at: 2 },
    { role: "assistant", content: "hello", created_at: 3 },
  ];
  const cases = [
    ["openai", history, { model: "gpt-4o", messages: history, tools, max_tokens: 500 }],
    ["anthropic", anthropic, { model: "claude-sonnet-4-5", system: "Be brief.", messages: anthropic, max_tokens: 800 }],
    ["moltis", moltis, { messages: moltis }],
    ...Object.entries(FORMATS).map(([format, f]) => {
      const h = f.history(6);
      return [format, h, f.request(h)];
    }),
  ];
  for (const [format, h, request] of cases) {
    for (const input of [h, request]) {
      const label = `${format} ${Array.isArray(input) ? "array" : "request"}`;
      const cold = measure(input, {}, "pending words");
      assert.equal(cold.format, format, label);
      assert.deepEqual(measure(input, {}, "pending words"), cold, `${label}: warm`);
      assert.deepEqual(measure(input, {}, "pending words"), measure(input, { cache: false }, "pending words"), `${label}: uncached`);
      assert.equal(estimateTokens(input), estimateTokens(input, { cache: false }), `${label}: estimateTokens`);
    }
  }
});

test("a stubbed meter follows the history into another format (the call is made again in full)", () => {
  // Read as OpenAI first; a Moltis notice appended makes every message Moltis.
  const h = [
    { role: "user", content: "hello ".repeat(50) },
    { role: "assistant", content: "hi", inputTokens: 900 },
  ];
  assert.equal(measure(h).format, "openai");
  h.push({ role: "notice", content: "a note for the UI only" });
  const m = measure(h);
  assert.equal(m.format, "moltis");
  assert.deepEqual(m, uncached(h));
  // And back: the notice removed, the records made as Moltis meet an OpenAI history.
  h.pop();
  assert.deepEqual(measure(h), uncached(h));
});

test("a forced format still sees the shape of stubbed messages", () => {
  const h = [
    { role: "user", content: "Read a.rs" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "c1", content: "ok" },
  ];
  measure(h);
  const uncachedError = (() => {
    try {
      uncached(h, { format: "anthropic" });
    } catch (e) {
      return e;
    }
  })();
  assert.equal(uncachedError?.code, "INVALID_INPUT");
  assert.throws(() => measure(h, { format: "anthropic" }), { code: "INVALID_INPUT", message: uncachedError.message });
  assert.deepEqual(measure(h, { format: "moltis" }), uncached(h, { format: "moltis" }));
});

test("provider usage, boundaries and roles survive as stubs", () => {
  const h = [
    { role: "user", content: "old ".repeat(300) },
    { role: "assistant", content: [{ type: "compaction", content: "summary of before" }] },
    { role: "user", content: "next ".repeat(40) },
    { role: "assistant", content: "answer", requestInputTokens: 5000 },
    { role: "user", content: "and then" },
  ];
  const cold = measure(h, { contextWindow: 100000 });
  assert.equal(cold.perMessage[0], 0, "behind the provider's compaction");
  assert.equal(cold.reported, true);
  h.push({ role: "user", content: "more" });
  const warm = measure(h, { contextWindow: 100000 });
  assert.deepEqual(warm, uncached(h, { contextWindow: 100000 }));
  assert.equal(warm.tokens, 5000 + warm.perMessage.slice(3).reduce((a, b) => a + b, 0), "the newest assistant turn's usage plus that turn and what follows");
  // Without the usage, what is behind the provider's compaction still counts nothing.
  delete h[3].requestInputTokens;
  h[3] = { ...h[3] };
  const plain = measure(h, { contextWindow: 100000 });
  assert.equal(plain.reported, false);
  assert.equal(plain.perMessage[0], 0);
  assert.deepEqual(plain, uncached(h, { contextWindow: 100000 }));
  // A usage of 0 is a UI's "not known", not an empty request.
  h[3] = { ...h[3], inputTokens: 0 };
  assert.equal(measure(h, { contextWindow: 100000 }).reported, false);
  assert.equal(measure(h, { contextWindow: 100000 }).tokens, plain.tokens);
});

test("cached segments copied in runs: any order, gaps, repeats and mixes of calls read as written", () => {
  const make = (tag, n) =>
    Array.from({ length: n }, (_, i) =>
      i % 3 === 1
        ? { role: "assistant", content: null, tool_calls: [{ id: `${tag}${i}`, type: "function", function: { name: "read", arguments: `{"path":"src/${tag}${i}.rs"}` } }] }
        : i % 3 === 2
          ? { role: "tool", tool_call_id: `${tag}${i - 1}`, content: `${tag} output ${i} `.repeat(30) }
          : { role: "user", content: `${tag} question ${i} ${"é😀".repeat(i % 5)}` },
    );
  const a = make("a", 30);
  const b = make("b", 30);
  const options = { mode: "deterministic", contextWindow: 100000 };
  // (a compaction keeps a history from its second call on)
  for (let call = 0; call < 2; call++) {
    compactSync(a, options);
    compactSync(b, options);
  }
  const variants = {
    "as cached": a,
    "two slabs": [...a, ...b],
    "interleaved slabs": a.flatMap((m, i) => [m, b[i]]),
    reversed: [...a].reverse(),
    "every other": a.filter((_, i) => i % 2 === 0),
    repeated: [...a.slice(0, 10), ...a.slice(0, 10)],
    "fresh in between": a.flatMap((m, i) => (i % 7 === 3 ? [{ role: "user", content: `new ${i}` }, m] : [m])),
  };
  for (const [name, h] of Object.entries(variants)) {
    for (const mode of ["deterministic", "recency_preserving"]) {
      const o = { mode, contextWindow: mode === "deterministic" ? 100000 : 1500, protectTailMin: 4 };
      let expected;
      try {
        expected = compactSync(h, { ...o, cache: false });
      } catch (e) {
        assert.throws(() => compactSync(h, o), { code: e.code, message: e.message }, `${name} ${mode}`);
        continue;
      }
      assert.deepEqual(compactSync(h, o), expected, `${name} ${mode}`);
    }
    assert.deepEqual(measure(h), uncached(h), `${name} measure`);
    assert.equal(estimateTokens(h), estimateTokens(h, { cache: false }), `${name} estimateTokens`);
  }
  // A hole in the array ends a run and is read as null, as without the cache.
  const holed = [...a];
  holed[5] = undefined;
  assert.throws(() => compactSync(holed, options), (e) => e.code === "INVALID_INPUT" && /messages\[5\]/.test(e.message));
});

test("provider usage above 2^53 reads the same from a stub as in full", () => {
  for (const reported of [2 ** 53, 2 ** 53 + 2, 2 ** 60 + 2 ** 9, 1e17]) {
    const h = [{ role: "user", content: "x" }, { role: "assistant", content: "y", inputTokens: reported }, { role: "user", content: "z" }];
    measure(h);
    assert.deepEqual(measure(h), uncached(h), String(reported));
  }
});

test("a pin function that calls the library leaves the outer call's encoding intact", () => {
  const h = [{ role: "system", content: "sys" }];
  for (let i = 0; i < 10; i++) h.push({ role: "user", content: `q${i} ${"word ".repeat(30)}` }, { role: "assistant", content: `a${i} ${"ans ".repeat(20)}` });
  const options = { mode: "recency_preserving", contextWindow: 600 };
  const plain = compactSync(h, { ...options, cache: false });
  let reentered = 0;
  const pin = (m, i) => {
    if (i === 0) {
      reentered++;
      estimateTokens([{ role: "user", content: "tiny" }], { cache: false });
      measure(h);
    }
    return false;
  };
  for (const cache of [false, true]) assert.deepEqual(compactSync(h, { ...options, pin, cache }).messages, plain.messages, `cache ${cache}`);
  assert.equal(reentered, 2);
});

test("a deeply frozen message is taken from the cache without a comparison; anything short of that is still checked", () => {
  // A Proxy over a frozen target must answer its target's values (a language
  // invariant), so counting its reads shows whether a call looked at it again.
  let reads = 0;
  const target = deepFreeze({ role: "assistant", content: [{ type: "text", text: `long ${"word ".repeat(300)}` }] });
  const watched = new Proxy(target, { get: (t, k, r) => (reads++, Reflect.get(t, k, r)) });
  const h = [deepFreeze({ role: "user", content: "hi" }), watched];
  const cold = measure(h);
  assert.ok(reads > 0);
  reads = 0;
  assert.deepEqual(measure(h), cold);
  assert.deepEqual(compactSync([...h, { role: "user", content: "next" }], { mode: "deterministic" }).notice.messagesBefore, 3);
  assert.equal(reads, 0, "a frozen message is not read again");
  assert.deepEqual(measure(h), uncached(h));

  // Frozen on the outside only: its parts can still change in place.
  const part = { type: "text", text: `a ${"word ".repeat(100)}` };
  const shallow = Object.freeze({ role: "user", content: [part] });
  const h2 = [shallow];
  measure(h2);
  part.text += " and more words at the end";
  assert.deepEqual(measure(h2), uncached(h2), "an edit under a shallow freeze is seen");

  // Frozen with a getter: its answer can change.
  let text = "short";
  const getter = Object.freeze({ role: "user", get content() { return text; } });
  const h3 = [getter];
  measure(h3);
  text = `much longer now ${"word ".repeat(200)}`;
  assert.deepEqual(measure(h3), uncached(h3), "a getter's new answer is seen");

  // A toJSON added later to a prototype (a class's, or Object.prototype) is honoured.
  class Msg {
    constructor(content) {
      this.role = "user";
      this.content = content;
      Object.freeze(this);
    }
  }
  const instance = new Msg("as constructed");
  measure([instance]);
  Msg.prototype.toJSON = () => ({ role: "user", content: `rewritten ${"word ".repeat(60)}` });
  assert.deepEqual(measure([instance]), uncached([instance]), "a class's toJSON added later");
  // Object.prototype gains one: every value is read through it, the history too
  // (as JSON.stringify reads it), so only outcomes compare.
  const outcome = (f) => {
    try {
      return f();
    } catch (e) {
      return { error: e.message };
    }
  };
  const plain = deepFreeze({ role: "user", content: "plain" });
  const request = { messages: [plain] };
  const before = measure(request).perMessage[0];
  try {
    // (JSON.stringify calls it once per value, not on its answer)
    const answer = function () {
      return this === plain ? { role: "user", content: `global ${"word ".repeat(60)}` } : this;
    };
    Object.defineProperty(Object.prototype, "toJSON", { value: answer, configurable: true, writable: true });
    const warm = outcome(() => measure(request));
    assert.deepEqual(warm, outcome(() => uncached(request)), "Object.prototype.toJSON added later");
    assert.ok(warm.perMessage[0] > before, "read through the new toJSON");
  } finally {
    delete Object.prototype.toJSON;
  }
  assert.deepEqual(measure(request), uncached(request));

  // Frozen with toJSON: it may answer another (even frozen) object next time.
  const answers = [deepFreeze({ role: "user", content: "one" }), deepFreeze({ role: "user", content: `two ${"word ".repeat(50)}` })];
  let which = 0;
  const custom = Object.freeze({ toJSON: () => answers[which] });
  measure([custom]);
  which = 1;
  assert.deepEqual(measure([custom]), uncached([custom]), "a toJSON's new answer is seen");
});

test("usage reported before a compaction is not taken after it: the meter agrees with the notice", () => {
  const big = "lorem ipsum dolor sit amet ".repeat(400);
  for (const alternation of ["keep", "merge"]) {
    const h = [{ role: "user", content: "Start the task." }];
    for (let i = 0; i < 40; i++) {
      h.push({ role: "assistant", content: null, tool_calls: [{ id: "c" + i, type: "function", function: { name: "read", arguments: "{}" } }] });
      h.push({ role: "tool", tool_call_id: "c" + i, content: big });
    }
    // what the provider reported for the request that produced this turn: the whole history
    h.push({ role: "assistant", content: "Done reading.", requestInputTokens: 99000 });
    h.push({ role: "user", content: "Now summarize." });
    const opts = { mode: "recency_preserving", contextWindow: 100000, alternation };
    assert.equal(measure(h, opts).reported, true);
    assert.equal(shouldCompact(h, opts), true);
    const r = compactSync(h, opts);
    // twice: the second reads the messages from their records (the cache)
    for (const round of [1, 2]) {
      const m = measure(r.messages, opts);
      assert.equal(m.reported, false, `${alternation} ${round}`);
      assert.equal(m.tokens, r.notice.tokensAfter, `${alternation} ${round}`);
      assert.equal(m.shouldCompact, false, `${alternation} ${round}`);
    }
    // a turn answered after the compaction reports about what it holds: its figure is taken
    const next = [...r.messages, { role: "assistant", content: "Summary: …", requestInputTokens: 23000 }, { role: "user", content: "ok" }];
    const after = measure(next, opts);
    assert.equal(after.reported, true, alternation);
    assert.ok(after.tokens > 23000 && after.tokens < 23100, `${alternation}: ${after.tokens}`);
  }
});

test("a Gemini request of @google/genai (system prompt and tools in config) counts what the REST shape counts", () => {
  const sys = "Follow the policy below.\n" + "Policy rule: be precise and cite sources. ".repeat(300);
  const tool = { functionDeclarations: [{ name: "lookup", description: "Look something up. ".repeat(50), parameters: { type: "object", properties: { q: { type: "string" } } } }] };
  const contents = [{ role: "user", parts: [{ text: "hello" }] }];
  const rest = measure({ model: "gemini-2.5-flash", contents, systemInstruction: { parts: [{ text: sys }] }, tools: [tool], generationConfig: { maxOutputTokens: 1000 } });
  assert.ok(rest.systemTokens > 1000 && rest.toolsTokens > 100);
  // systemInstruction as a string, a content, one part, or a list of parts and strings
  for (const systemInstruction of [sys, { parts: [{ text: sys }] }, { text: sys }, [sys], [{ text: sys }]]) {
    const genai = measure({ model: "gemini-2.5-flash", contents, config: { systemInstruction, tools: [tool], maxOutputTokens: 1000 } });
    assert.equal(genai.systemTokens, rest.systemTokens, JSON.stringify(systemInstruction).slice(0, 30));
    assert.equal(genai.toolsTokens, rest.toolsTokens);
    assert.equal(genai.tokens, rest.tokens);
  }
});

test("a frozen message cached near the nesting limit is checked again where it lies deeper", () => {
  const deepFreeze = (v) => {
    if (v && typeof v === "object") {
      Object.values(v).forEach(deepFreeze);
      Object.freeze(v);
    }
    return v;
  };
  let meta = "leaf";
  for (let i = 0; i < 126; i++) meta = { n: meta };
  const h = [deepFreeze({ role: "user", content: "hello there", meta }), { role: "assistant", content: "hi" }];
  const request = { model: "gpt-4o", messages: h };
  const refused = (f) => assert.throws(f, (e) => e.code === "INVALID_INPUT" && /nested deeper/.test(e.message));
  refused(() => measure(request, { cache: false }));
  assert.ok(measure(h).tokens > 0, "one level higher it fits, and is cached");
  refused(() => measure(request));
  refused(() => estimateTokens(request));
});

test("parseConfig's options pass on as they are: without context_window the request's model picks the window", async () => {
  const config = await parseConfig('[chat.compaction]\nmode = "recency_preserving"\n');
  assert.equal(config.contextWindowGiven, false);
  assert.equal("contextWindow" in config.options, false);
  const request = { model: "gpt-4o", messages: history };
  assert.equal(measure(request, config.options).contextWindow, 128000);
  const given = await parseConfig("[chat.compaction]\ncontext_window = 64000\n");
  assert.equal(measure(request, given.options).contextWindow, 64000);
  // the tokenizer too: the model's unless the table sets one
  assert.equal(config.tokenizerGiven, false);
  assert.equal("tokenizer" in config.options, false);
  const claude = { model: "claude-sonnet-4-5", messages: history };
  assert.equal(measure(claude, config.options).options.tokenizer, "claude");
  const set = await parseConfig('[chat.compaction]\ntokenizer = "o200k"\n');
  assert.equal(set.tokenizerGiven, true);
  assert.equal(measure(claude, set.options).options.tokenizer, "o200k");
});

test("a request's well-known model picks the tokenizer unless one is given, as the Rust API does (models.json)", () => {
  const cases = JSON.parse(readFileSync(new URL("../fixtures/estimates/models.json", import.meta.url), "utf8"));
  const messages = [{ role: "user", content: "How many tokens is this question, really?" }, { role: "assistant", content: "About ten." }];
  for (const { model, tokenizer } of cases) {
    const request = { model, messages };
    const m = measure(request);
    assert.equal(m.options.tokenizer, tokenizer, JSON.stringify(model));
    assert.equal(m.tokens, measure(request, { tokenizer }).tokens);
    assert.equal(estimateTokens(request), estimateTokens(request, { tokenizer }));
    assert.equal(compactSync(request, { mode: "deterministic" }).notice.options.tokenizer, tokenizer);
    assert.equal(measure(request, { tokenizer: "o200k" }).options.tokenizer, "o200k");
  }
  assert.equal(measure(messages).options.tokenizer, "o200k");
});

test("the model's tokenizer keys the cache: records of one profile never stand for another", () => {
  const messages = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `turn ${i}: ` + "a fairly ordinary sentence about the build ".repeat(20) }));
  const exact = (tokenizer) => measure({ model: "gpt-4o", messages }, { tokenizer, cache: false }).tokens;
  const other = [{ role: "user", content: "another chat" }, { role: "assistant", content: "with its own meter" }];
  // the same message objects, in turn under a model of each profile, cached and held
  for (let round = 0; round < 3; round++) {
    const [o200k, claude] = [exact("o200k"), exact("claude")];
    assert.ok(claude > o200k);
    // (another history between the calls takes the session: the records alone carry over)
    assert.equal(measure({ model: "gpt-4o", messages }).tokens, o200k, `round ${round}, gpt-4o`);
    measure(other);
    assert.equal(measure({ model: "claude-opus-4-1", messages }).tokens, claude, `round ${round}, claude`);
    measure(other);
    assert.equal(measure(messages).tokens, measure(messages, { cache: false }).tokens);
    messages.push({ role: "user", content: `and one more (${round})` });
  }
});

test("the model's tokenizer leaves the caller's options object as it is: methods and inherited options still count", () => {
  const messages = Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `message ${i} with some words in it` }));
  class Options {
    countTokens() {
      return 1;
    }
    pin(m, i) {
      return i === 1;
    }
  }
  const claude = { model: "claude-sonnet-4-5", messages };
  // the caller's counter counts (each text 1), with Claude's framing, as with tokenizer given
  const m = measure(claude, new Options());
  assert.equal(m.options.tokenizer, "claude");
  assert.equal(m.tokens, measure(claude, { countTokens: () => 1, tokenizer: "claude" }).tokens);
  assert.ok(m.tokens < 150, `${m.tokens}`);
  const r = compactSync(claude, Object.assign(new Options(), { mode: "deterministic", contextWindow: 60, protectHead: 0 }));
  assert.ok(r.messages.includes(messages[1]), "the pin method kept message 1");
});

test("a model read through a getter that throws is reported by the tape, not thrown raw", () => {
  const request = { messages: [{ role: "user", content: "hi" }] };
  Object.defineProperty(request, "model", { enumerable: true, get() { throw new Error("no model today"); } });
  assert.throws(() => measure(request), (e) => e instanceof CompactionError && e.code === "INVALID_INPUT" && /no model today/.test(e.message));
});

test("a count above what wasm's usize holds is clamped with a warning, not silently", () => {
  for (const key of ["protectHead", "protectTailMin", "toolPruneCharThreshold", "maxToolResultBytes"]) {
    const m = measure([{ role: "user", content: "hi" }], { [key]: 2 ** 40 });
    assert.equal(m.options[key], 2 ** 32 - 1, key);
    assert.ok(m.warnings.some((w) => w.code === "CLAMPED" && w.message.includes(key)), `${key}: ${JSON.stringify(m.warnings)}`);
  }
});

test("after a compaction that left out little, a kept turn's figure is still not taken; a figure that dropped since is", () => {
  const text = (i) => `message ${i}: ` + "the quick brown fox jumps over the lazy dog and keeps running ".repeat(30);
  const plain = Array.from({ length: 60 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: text(i) }));
  const per = measure(plain, { cache: false, contextWindow: 1e6 }).perMessage;
  let sum = 0;
  const h = plain.map((m, i) => {
    const withUsage = m.role === "assistant" ? { ...m, requestInputTokens: sum } : m;
    sum += per[i];
    return withUsage;
  });
  const opts = { mode: "recency_preserving", contextWindow: 20000, tailBudgetRatio: 0.75, protectHead: 1, protectTailMin: 4 };
  const r = compactSync(h, opts);
  for (const cache of [true, false]) {
    const m = measure(r.messages, { ...opts, cache });
    assert.equal(m.reported, false);
    assert.equal(m.tokens, r.notice.tokensAfter);
  }
  // A turn answered since reports less than the kept turns did: its figure is taken, whatever it is.
  const next = [...r.messages, { role: "assistant", content: "ok", requestInputTokens: 15500 }, { role: "user", content: "and?" }];
  const after = measure(next, opts);
  assert.equal(after.reported, true);
  assert.ok(after.tokens >= 15500);
});

test("after a compaction, a figure is judged against the newest figure older than every compaction: a kept turn's is refused even where little was left out, a fresh one is taken even with much the meter cannot see", () => {
  const words = (n, s) => Array.from({ length: n }, (_, i) => `${s}${i % 97}`).join(" ");
  const turns = [{ role: "system", content: "You are a coding agent." }];
  for (let t = 0; t < 12; t++) {
    turns.push({ role: "user", content: `step ${t}: ` + words(40, "u") });
    turns.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}`, type: "function", function: { name: "read", arguments: `{"path":"src/f${t}.rs"}` } }] });
    turns.push({ role: "tool", tool_call_id: `c${t}`, content: words(t < 6 ? 900 : 60, "x") });
  }
  const per = measure(turns, { cache: false, contextWindow: 1e6 }).perMessage;
  // What the provider reported: the history before each turn, plus `hidden` tokens
  // the bare array does not show (tool definitions, a system prompt held apart).
  const reported = (hidden) => turns.map((m, i) => (m.role === "assistant" ? { ...m, requestInputTokens: hidden + per.slice(0, i).reduce((a, b) => a + b, 0) } : m));
  const total = per.reduce((a, b) => a + b, 0);
  // A compaction that leaves out about an eighth (a tail budget near its maximum).
  const small = { mode: "recency_preserving", contextWindow: Math.ceil(total / 0.95) - 20, protectTailMin: 30, tailBudgetRatio: 0.8 };
  const h = reported(0);
  assert.equal(measure(h, small).shouldCompact, true);
  const r = compactSync(h, small);
  assert.ok(r.notice.tokensAfter > 0.8 * r.notice.tokensBefore, `little left out: ${r.notice.tokensBefore} → ${r.notice.tokensAfter}`);
  const after = measure([...r.messages, { role: "user", content: "next" }], small);
  assert.equal(after.reported, false, "the kept turn's figure counts what was left out");
  assert.equal(after.shouldCompact, false);
  // 6,000 tokens the meter cannot see: a figure answered since is taken, the kept ones still not.
  const hidden = 6000;
  const wide = { mode: "recency_preserving", contextWindow: Math.ceil((total + hidden) / 0.95) - 20 };
  const compacted = compactSync(reported(hidden), wide);
  const kept = [...compacted.messages, { role: "user", content: "next" }];
  assert.equal(measure(kept, wide).reported, false);
  const fresh = compacted.notice.tokensAfter + hidden;
  const answered = [...kept, { role: "assistant", content: "done", requestInputTokens: fresh }, { role: "user", content: "and?" }];
  const m = measure(answered, wide);
  assert.equal(m.reported, true, "a figure answered since is taken");
  assert.ok(m.tokens >= fresh && m.tokens < fresh + 100, `${m.tokens}`);
});
