// The newer formats through the built package: OpenAI Responses items (request key
// `input`), AI SDK ModelMessages and UIMessages (`messages`), Gemini contents
// (`contents`). Compaction results validate, keep the caller's own objects and the
// opaque fields providers need back, come back under the request's own key, and
// `rebase` splices what came meanwhile; `validate` finds each broken rule.
import { test } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { compact, compactSync, measure, rebase, validate, CompactionError } from "../../pkg/node.js";
import { FORMATS, opaque } from "./histories.mjs";

const WINDOW = 2000;
// UIMessages hold a call and its result in one message: more rounds to fill the window.
const ROUNDS = { "openai-responses": 10, "ai-sdk": 10, "ai-sdk-ui": 25, gemini: 10 };
const OPAQUE_KEYS = new Set(["encrypted_content", "thoughtSignature", "signature"]);

/** Every opaque value (encrypted reasoning, thought signatures) anywhere in `v`. */
function opaqueValues(v, out = []) {
  if (Array.isArray(v)) v.forEach((x) => opaqueValues(x, out));
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (OPAQUE_KEYS.has(k) && typeof x === "string") out.push(x);
      else opaqueValues(x, out);
    }
  }
  return out;
}

/** The `step` a message's tool call carries (in its input, args or JSON arguments), if any. */
function stepOf(v) {
  if (typeof v === "string" && v.startsWith("{")) {
    try {
      return stepOf(JSON.parse(v));
    } catch {
      return undefined;
    }
  }
  if (v === null || typeof v !== "object") return undefined;
  if (!Array.isArray(v) && typeof v.step === "number") return v.step;
  for (const x of Object.values(v)) {
    const s = stepOf(x);
    if (s !== undefined) return s;
  }
  return undefined;
}

/** The input message a (possibly edited) output message stands for: the same `id`, or the same call step and role. */
function counterpart(history, m) {
  if (history.includes(m)) return m;
  if (typeof m.id === "string") return history.find((h) => h.id === m.id);
  const step = stepOf(m);
  if (step === undefined) return undefined;
  return history.find((h) => h.role === m.role && h.type === m.type && stepOf(h) === step);
}

/**
 * The checks every compaction result of a new format must pass: kept messages are
 * the caller's own objects (no copies of unchanged ones), opaque values come back
 * byte-identical with their message, none is made up or cut.
 */
function checkKeptAndOpaque(history, messages, what) {
  const inputOpaque = new Set(opaqueValues(history));
  for (const [i, m] of messages.entries()) {
    if (!history.includes(m)) {
      assert.ok(!history.some((h) => isDeepStrictEqual(h, m)), `${what}: messages[${i}] is a copy of an unchanged input message, not the caller's own object`);
    }
    for (const value of opaqueValues(m)) {
      assert.ok(inputOpaque.has(value), `${what}: messages[${i}] holds an opaque value that is not byte-identical to one of the input: ${value.slice(0, 40)}…`);
    }
    const source = counterpart(history, m);
    if (source !== undefined) {
      assert.deepEqual(opaqueValues(m), opaqueValues(source), `${what}: messages[${i}] kept the opaque values of the message it stands for`);
    }
  }
}

for (const [format, spec] of Object.entries(FORMATS)) {
  test(`${format}: compaction results validate, keep the caller's objects and opaque fields, and use the request's key`, () => {
    const history = spec.history(ROUNDS[format]);
    assert.deepEqual(validate(history), { format, violations: [] }, "the hand-written input is valid and detected");
    for (const input of [history, spec.request(history)]) {
      const pristine = structuredClone(input);
      for (const mode of ["recency_preserving", "deterministic"]) {
        const options = { mode, contextWindow: WINDOW };
        const what = `${format} ${mode} ${Array.isArray(input) ? "array" : "request"}`;
        const r = compactSync(input, options);
        assert.deepEqual(input, pristine, `${what}: the input is not mutated`);
        assert.equal(r.notice.format, format, `${what}: detected`);
        assert.equal(r.notice.mode, mode);
        assert.equal(r.notice.messagesBefore, history.length);
        assert.equal(r.notice.messagesAfter, r.messages.length);
        assert.ok(r.notice.messagesAfter < r.notice.messagesBefore, `${what}: fewer messages (${r.notice.messagesBefore} → ${r.notice.messagesAfter})`);
        assert.ok(r.notice.tokensAfter < r.notice.tokensBefore, `${what}: fewer tokens`);
        // A request is about to be sent: its newest calls must be answered too.
        const sent = r.request ?? r.messages;
        assert.deepEqual(validate(sent, { format }).violations, [], `${what}: the result validates`);
        if (Array.isArray(input)) {
          assert.equal(r.request, undefined, `${what}: no request for an array`);
        } else {
          assert.deepEqual(Object.keys(r.request), Object.keys(input), `${what}: the request's keys, in order`);
          assert.equal(r.request[spec.key], r.messages, `${what}: request.${spec.key} is the result's messages`);
          for (const k of Object.keys(input)) if (k !== spec.key) assert.equal(r.request[k], input[k], `${what}: request.${k} kept`);
        }
        checkKeptAndOpaque(history, r.messages, what);
        if (mode === "recency_preserving") {
          const own = r.messages.filter((m) => history.includes(m));
          assert.ok(own.length >= 10, `${what}: ${own.length} messages kept as the caller's own objects`);
          assert.equal(r.messages.at(-1), history.at(-1), `${what}: the newest message is the caller's own object`);
          assert.ok(opaqueValues(r.messages).length >= 3, `${what}: opaque values of kept messages are there`);
        }
        assert.equal(JSON.stringify(compactSync(input, options)), JSON.stringify(r), `${what}: the same output again`);
      }
    }
  });
}

test("compact() (the async path, an LLM mode) reads and answers under the request's key", async () => {
  const summary = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps", "## Critical Context"]
    .map((h) => (h === "## Progress" ? h : `${h}\n(none)`))
    .join("\n");
  for (const [format, spec] of Object.entries(FORMATS)) {
    const history = spec.history(ROUNDS[format]);
    const request = spec.request(history);
    const pristine = structuredClone(request);
    let asked;
    const r = await compact(request, { mode: "structured", contextWindow: WINDOW, summarize: (req) => { asked = req; return summary; } });
    assert.deepEqual(request, pristine, `${format}: the input is not mutated`);
    assert.equal(r.notice.mode, "structured", `${format}: ${r.notice.fallback?.reason}`);
    assert.equal(r.notice.format, format);
    assert.equal(r.request[spec.key], r.messages, `${format}: request.${spec.key}`);
    assert.deepEqual(Object.keys(r.request), Object.keys(request));
    assert.deepEqual(validate(r.request, { format }).violations, [], `${format}: the structured result validates`);
    assert.ok(r.messages.some((m) => history.includes(m)), `${format}: the caller's own objects are kept`);
    // (copies it may change: the caller's history stays as it is)
    const same = (m) => history.some((h) => JSON.stringify(h) === JSON.stringify(m));
    assert.ok(asked.messages.some(same), `${format}: the summarizer gets the caller's messages`);
    assert.ok(!asked.messages.some((m) => history.includes(m)), `${format}: as copies`);
  }
});

test("a request keyed input or contents: pins, errors naming the message, and a non-array value", async () => {
  const gemini = FORMATS.gemini.request(FORMATS.gemini.history(10));
  // A model turn of the middle (a user turn next to the marker would take the marker in, alternation merge).
  const pinned = gemini.contents[7];
  assert.equal(compactSync(gemini, { mode: "recency_preserving", contextWindow: WINDOW }).messages.includes(pinned), false, "elided unless pinned");
  for (const pin of [(m) => m === pinned, [7]]) {
    const r = compactSync(gemini, { mode: "recency_preserving", contextWindow: WINDOW, pin });
    assert.ok(r.messages.includes(pinned), `a pin (${typeof pin}) on a contents turn keeps the caller's object`);
  }
  const items = FORMATS["openai-responses"].history(3);
  const bad = { model: "gpt-5", input: [...items.slice(0, 2), { role: "user", content: "x", n: 1n }] };
  assert.throws(() => compactSync(bad), (e) => e instanceof CompactionError && e.code === "INVALID_INPUT" && e.message.startsWith("messages[2]: a BigInt"));
  for (const request of [{ model: "gpt-5", input: { role: "user" } }, { contents: { role: "user" } }]) {
    assert.throws(() => compactSync(request), { code: "INVALID_INPUT" });
    await assert.rejects(compact(request), { code: "INVALID_INPUT" });
    assert.throws(() => validate(request), { code: "INVALID_INPUT" });
  }
  await assert.rejects(compact({ model: "gpt-5" }), (e) => e.code === "INVALID_INPUT" && /"messages" \("input", "contents"\)/.test(e.message));
  // `messages` wins over `input`, as in Rust.
  const both = { messages: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }], input: items };
  const r = compactSync(both, { mode: "deterministic" });
  assert.equal(r.request.messages, r.messages);
  assert.equal(r.request.input, items);
});

test("the alternation option reaches the core: Gemini merges the marker by default, keeps it apart on request", () => {
  const history = FORMATS.gemini.history(10);
  const merged = compactSync(history, { mode: "recency_preserving", contextWindow: WINDOW });
  const kept = compactSync(history, { mode: "recency_preserving", contextWindow: WINDOW, alternation: "keep" });
  assert.deepEqual(merged.warnings.concat(kept.warnings).filter((w) => w.code === "UNKNOWN_OPTION"), []);
  assert.deepEqual(validate(merged.messages, { strictAlternation: true }).violations, [], "merge: roles alternate");
  assert.equal(kept.messages.length, merged.messages.length + 1, "keep: the marker is a turn of its own");
  assert.deepEqual(validate(kept.messages).violations, []);
});

// ---- rebase ------------------------------------------------------------------------------

/** A model reply and a user question in each format, to append while a compaction runs. */
const TURNS = {
  "openai-responses": () => [
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Anything else?" }] },
    { role: "user", content: "One more thing: a museum pass." },
  ],
  "ai-sdk": () => [{ role: "assistant", content: "Anything else?" }, { role: "user", content: "One more thing: src/g.ts." }],
  "ai-sdk-ui": () => [
    { id: "a_new", role: "assistant", parts: [{ type: "text", text: "Anything else?" }] },
    { id: "u_new", role: "user", parts: [{ type: "text", text: "One more thing: Oslo." }] },
  ],
  gemini: () => [{ role: "model", parts: [{ text: "Anything else?" }] }, { role: "user", parts: [{ text: "One more thing: Sunday." }] }],
};

for (const [format, spec] of Object.entries(FORMATS)) {
  test(`${format}: rebase splices the messages that came meanwhile, under the request's key`, () => {
    const history = spec.history(ROUNDS[format]);
    const request = spec.request(history);
    const r = compactSync(request, { mode: "recency_preserving", contextWindow: WINDOW });
    const added = TURNS[format]();
    const current = { ...request, [spec.key]: [...history, ...added] };
    const next = rebase(r, current);
    assert.deepEqual(Object.keys(next), Object.keys(request));
    assert.deepEqual(next[spec.key], [...r.messages, ...added]);
    assert.equal(next[spec.key].at(-1), added.at(-1), "the appended messages are the caller's objects");
    for (const k of Object.keys(request)) if (k !== spec.key) assert.equal(next[k], request[k]);
    assert.deepEqual(validate(next, { format }).violations, []);
    // The same history as an array, with the room the request reserves for its
    // answer and the tokenizer its model implies.
    const reserve = { reserveOutputTokens: request.maxOutputTokens ?? 0, tokenizer: r.notice.options.tokenizer };
    assert.deepEqual(rebase(compactSync(history, { mode: "recency_preserving", contextWindow: WINDOW, ...reserve }), [...history, ...added]), next[spec.key], "an array gives an array");
    const edited = { ...current, [spec.key]: current[spec.key].map((m, i) => (i === 5 ? { ...m, edited: true } : m)) };
    assert.throws(() => rebase(r, edited), (e) => e.code === "STALE_HISTORY" && /messages\[5\] changed/.test(e.message));
  });
}

test("rebase: results of calls still running when the compaction started attach to them (every format)", () => {
  const cases = {
    // Two parallel calls of one turn; one output came before the compaction, one after.
    "openai-responses": [
      [
        { role: "user", content: "Book both hotels." },
        { type: "reasoning", id: "rs_x", summary: [], encrypted_content: opaque("gAAAAB", 99) },
        { type: "function_call", id: "fc_a", call_id: "call_a", name: "book", arguments: '{"hotel":"A"}' },
        { type: "function_call", id: "fc_b", call_id: "call_b", name: "book", arguments: '{"hotel":"B"}' },
        { type: "function_call_output", call_id: "call_b", output: "booked B" },
      ],
      [{ type: "function_call_output", call_id: "call_a", output: "booked A" }],
    ],
    "ai-sdk": [
      [
        { role: "user", content: "Read src/g.ts." },
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "tc_x", toolName: "readFile", input: { path: "src/g.ts" } }] },
      ],
      [{ role: "tool", content: [{ type: "tool-result", toolCallId: "tc_x", toolName: "readFile", output: { type: "text", value: "export {}" } }] }],
    ],
    gemini: [
      [
        { role: "user", parts: [{ text: "And Sunday?" }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: { day: "sunday" } }, thoughtSignature: opaque("CiQB", 99) }] },
      ],
      [{ role: "user", parts: [{ functionResponse: { name: "get_weather", response: { forecast: "rain" } } }] }],
    ],
  };
  for (const [format, [running, results]] of Object.entries(cases)) {
    const spec = FORMATS[format];
    const history = [...spec.history(ROUNDS[format]), ...running];
    const request = spec.request(history);
    assert.deepEqual(validate(history).violations, [], `${format}: a stored history may end while its tools run`);
    assert.equal(validate(request).violations[0]?.code, "MISSING_RESULT", `${format}: a request about to be sent may not`);
    const r = compactSync(request, { mode: "recency_preserving", contextWindow: WINDOW });
    for (const m of running) assert.ok(r.messages.includes(m), `${format}: the running turn is kept as it is`);
    const next = rebase(r, { ...request, [spec.key]: [...history, ...results] });
    assert.deepEqual(next[spec.key].slice(-results.length), results);
    assert.deepEqual(validate(next, { format }).violations, [], `${format}: the rebased request validates`);
    // deterministic keeps the running turn after its summary too: the result attaches.
    const summarized = compactSync(running, { mode: "deterministic" });
    const rebased = rebase(summarized, [...running, ...results]);
    assert.deepEqual(rebased.slice(-results.length), results, `${format}: deterministic`);
    assert.deepEqual(validate(rebased, { format }).violations, [], `${format}: deterministic, rebased`);
  }
});

// ---- validate --------------------------------------------------------------------------------

test("validate finds the broken rule of each format, with its code and index", () => {
  const user = { role: "user", content: "hi" };
  const cases = [
    // [name, history, options, expected [index, code] pairs]
    ["openai: a tool message answering no call", [user, { role: "assistant", content: "ok" }, { role: "tool", tool_call_id: "nope", content: "x" }], {}, [[2, "ORPHAN_RESULT"]]],
    ["openai-responses: an output answering no call", [user, { type: "function_call_output", call_id: "nope", output: "x" }], {}, [[1, "ORPHAN_RESULT"]]],
    ["ai-sdk: a tool-result answering no call", [user, { role: "assistant", content: "ok" }, { role: "tool", content: [{ type: "tool-result", toolCallId: "nope", toolName: "t", output: { type: "text", value: "x" } }] }], {}, [[2, "ORPHAN_RESULT"]]],
    ["gemini: a functionResponse answering no call", [{ role: "user", parts: [{ text: "hi" }] }, { role: "model", parts: [{ text: "ok" }] }, { role: "user", parts: [{ functionResponse: { name: "f", response: {} } }] }], {}, [[2, "ORPHAN_RESULT"]]],
    ["anthropic: a tool_result answering no call", [user, { role: "assistant", content: "ok" }, { role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }], {}, [[2, "ORPHAN_RESULT"]]],
    ["openai-responses: a request whose newest call is unanswered", { model: "gpt-5", input: [user, { type: "function_call", call_id: "c1", name: "f", arguments: "{}" }] }, {}, [[1, "MISSING_RESULT"]]],
    ["ai-sdk: a request whose newest call is unanswered", { model: "m", messages: [user, { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "f", input: {} }] }] }, {}, [[1, "MISSING_RESULT"]]],
    ["openai: a request whose newest call is unanswered", { model: "gpt-4o", messages: [user, { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }] }, {}, [[1, "MISSING_RESULT"]]],
    ["gemini: a request ending on a model turn", { contents: [{ role: "user", parts: [{ text: "hi" }] }, { role: "model", parts: [{ text: "hello" }] }] }, {}, [[1, "ENDS_ON_MODEL"]]],
    ["gemini: a request ending on an unanswered call", { contents: [{ role: "user", parts: [{ text: "hi" }] }, { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] }] }, {}, [[1, "MISSING_RESULT"], [1, "ENDS_ON_MODEL"]]],
    ["openai-responses: a reasoning item at the end", [user, { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA" }], {}, [[1, "REASONING_WITHOUT_FOLLOWER"]]],
    ["ai-sdk-ui: an older tool part without output", [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }, { id: "a1", role: "assistant", parts: [{ type: "tool-f", toolCallId: "c1", state: "input-available", input: {} }] }, { id: "u2", role: "user", parts: [{ type: "text", text: "and?" }] }], {}, [[1, "INCOMPLETE_TOOL_PART"]]],
    ["anthropic: user, user with strictAlternation", [user, { role: "user", content: [{ type: "text", text: "again" }] }], { format: "anthropic", strictAlternation: true }, [[1, "ROLES_NOT_ALTERNATING"]]],
    ["anthropic: user, user with strict_alternation", [user, { role: "user", content: "again" }], { format: "anthropic", strict_alternation: true }, [[1, "ROLES_NOT_ALTERNATING"]]],
    ["bedrock: user, user and an assistant first", [{ role: "assistant", content: "hello" }, user, user], { format: "anthropic", provider: "bedrock" }, [[0, "FIRST_NOT_USER"], [2, "ROLES_NOT_ALTERNATING"]]],
  ];
  for (const [name, history, options, expected] of cases) {
    const pristine = structuredClone(history);
    const got = validate(history, options);
    assert.deepEqual(history, pristine, `${name}: not mutated`);
    assert.deepEqual(got.violations.map((v) => [v.index, v.code]), expected, `${name}: ${JSON.stringify(got.violations)}`);
    for (const v of got.violations) assert.ok(v.message.startsWith(`messages[${v.index}]: `), `${name}: the message names the place: ${v.message}`);
  }
});

test("validate: a bare array may end while tools run; format, provider and errors", () => {
  const call = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] };
  const user = { role: "user", content: "hi" };
  assert.deepEqual(validate([user, call]), { format: "openai", violations: [] }, "a stored history: the call may still run");
  assert.deepEqual(validate({ messages: [user, call] }).violations.map((v) => v.code), ["MISSING_RESULT"], "a request: it must be answered");
  assert.deepEqual(validate({ contents: [{ role: "user", parts: [{ text: "hi" }] }, { role: "model", parts: [{ text: "yo" }] }] }).violations.map((v) => v.code), ["ENDS_ON_MODEL"]);
  assert.deepEqual(validate([{ role: "user", parts: [{ text: "hi" }] }, { role: "model", parts: [{ text: "yo" }] }]).violations, [], "a Gemini array may end on a model turn");
  assert.deepEqual(validate([user, { role: "user", content: "again" }], { format: "anthropic" }).violations, [], "alternation is only checked when asked");
  assert.equal(validate([user]).format, "openai");
  assert.equal(validate([user], { format: "ai-sdk" }).format, "ai-sdk", "format forces the reading");
  // Codes a caller can switch on; errors like the other calls'.
  assert.throws(() => validate(undefined), (e) => e instanceof CompactionError && e.code === "INVALID_INPUT");
  assert.throws(() => validate(42), { code: "INVALID_INPUT" });
  assert.throws(() => validate([user], { provider: "mistral" }), (e) => e.code === "INVALID_CONFIG" && /provider/.test(e.message));
  assert.throws(() => validate([user], { format: "xml" }), { code: "INVALID_CONFIG" });
  assert.throws(() => validate([user], { strictAlternation: "yes" }), { code: "INVALID_CONFIG" });
  assert.throws(() => validate([user], "anthropic"), { code: "INVALID_CONFIG" });
  assert.throws(() => validate([user], [1]), { code: "INVALID_CONFIG" });
  // The options of a compaction are left aside (one object for both calls); a key neither knows is not.
  const options = { format: "anthropic", mode: "recency_preserving", contextWindow: 8000, pin: [0], summarize: () => "x", cache: false };
  assert.deepEqual(validate([user], options).violations, []);
  assert.throws(() => validate([user], { contextWindows: 8000 }), (e) => e.code === "INVALID_CONFIG" && /contextWindows/.test(e.message));
  assert.throws(() => validate([{ role: "user", content: 42 }]), (e) => e.code === "INVALID_INPUT" && /messages\[0\]/.test(e.message));
  // Ids with lone surrogates come back as they were.
  const id = "call_\uD800x";
  const orphan = validate([user, { role: "assistant", content: "ok" }, { role: "tool", tool_call_id: id, content: "x" }]);
  assert.ok(orphan.violations[0].message.includes(id), orphan.violations[0].message);
  assert.equal(compactSync([user, { role: "assistant", content: "ok" }]).messages.length, 1, "still works afterwards");
});

test("Gemini: a call with an id answered by a response without one pairs by name and order", () => {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ");
  const call = { role: "model", parts: [{ functionCall: { id: "fc-1", name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "SIG" }] };
  const answer = { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { result: "18C sunny" } } }] };
  const h = [{ role: "user", parts: [{ text: "q1 " + words(1500) }] }, { role: "model", parts: [{ text: "a1 " + words(1500) }] }, { role: "user", parts: [{ text: "weather in Paris?" }] }, call, answer, { role: "model", parts: [{ text: "It is 18C and sunny." }] }, { role: "user", parts: [{ text: "thanks" }] }];
  assert.deepEqual(validate(h).violations, []);
  const r = compactSync(h, { mode: "recency_preserving", contextWindow: 8000, protectHead: 1, protectTailMin: 2 });
  assert.ok(r.messages.includes(answer), "the real response stays, the caller's own object");
  assert.ok(!JSON.stringify(r.messages).includes("[Result from earlier"), "no stub stands in for it");
  // The other way round: a call without an id, a response with one.
  const unnamed = { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] };
  const named = { role: "user", parts: [{ functionResponse: { id: "fc-9", name: "get_weather", response: { result: "18C" } } }] };
  assert.deepEqual(validate([h[0], h[1], h[2], unnamed, named]).violations, []);
});

test("an AI SDK request with its own system and a system message still reads as AI SDK once no tool parts are left", async () => {
  const messages = [{ role: "system", content: "You are a coding agent." }, { role: "user", content: "Fix src/app.ts" }];
  for (let i = 0; i < 20; i++) {
    messages.push(
      { role: "assistant", content: [{ type: "tool-call", toolCallId: `tc_${i}`, toolName: "readFile", input: { path: `src/f${i}.ts` } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: `tc_${i}`, toolName: "readFile", output: { type: "text", value: "lorem ipsum ".repeat(200) } }] },
      { role: "user", content: `next ${i}` },
    );
  }
  const request = { model: "anthropic/claude-sonnet-4.5", system: "Be brief.", messages };
  for (const mode of ["llm_replace", "deterministic"]) {
    const r = await compact(request, { mode, contextWindow: 6000, summarize: () => "the summary" });
    assert.equal(measure(r.request).format, "ai-sdk", mode);
    assert.deepEqual(validate(r.request).violations, [], mode);
  }
  // Anthropic's own requests (no system message among the messages) stay Anthropic.
  assert.equal(measure({ system: "Be brief.", messages: [{ role: "user", content: "hi" }] }).format, "anthropic");
});

test("AI SDK: an assistant with a provider-executed result inline still has its own calls answered by the next tool message", () => {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ");
  const h = [
    { role: "user", content: "q1 " + words(1500) },
    { role: "assistant", content: "a1 " + words(1500) },
    { role: "user", content: "search, then read a.txt" },
    { role: "assistant", content: [
      { type: "tool-call", toolCallId: "ws1", toolName: "web_search", input: { query: "x" }, providerExecuted: true },
      { type: "tool-result", toolCallId: "ws1", toolName: "web_search", output: { type: "json", value: [{ url: "u" }] }, providerExecuted: true },
      { type: "tool-call", toolCallId: "c2", toolName: "readFile", input: { path: "a.txt" } },
    ] },
  ];
  const done = [...h, { role: "tool", content: [{ type: "tool-result", toolCallId: "c2", toolName: "readFile", output: { type: "text", value: "42" } }] }];
  assert.deepEqual(validate(done).violations, []);
  const r = compactSync(h, { mode: "recency_preserving", contextWindow: 8000, protectHead: 1, protectTailMin: 2 });
  assert.equal(rebase(r, done).at(-1), done.at(-1), "the result that came meanwhile rebases");
});

test("AI SDK: a tool-approval-response message stays between its call and the result that follows it", () => {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ");
  const approval = { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap1", approved: true }] };
  const result = { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "deleteFile", output: { type: "json", value: { success: true, freed: "12 MB" } } }] };
  const h = [
    { role: "user", content: "q1 " + words(1500) }, { role: "assistant", content: "a1 " + words(1500) },
    { role: "user", content: "q2 " + words(1500) }, { role: "assistant", content: "a2 " + words(1500) },
    { role: "user", content: "delete tmp.txt" },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "deleteFile", input: { filename: "tmp.txt" } }, { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" }] },
    approval, result,
    { role: "assistant", content: "Deleted tmp.txt, freed 12 MB." },
    { role: "user", content: "thanks" },
  ];
  assert.deepEqual(validate(h).violations, []);
  const r = compactSync(h, { mode: "recency_preserving", contextWindow: 8000, protectHead: 1, protectTailMin: 2 });
  const at = r.messages.indexOf(approval);
  assert.ok(at > 0 && r.messages[at + 1] === result, "the approval, then the real result, the caller's own objects");
  assert.ok(!JSON.stringify(r.messages).includes("[Result from earlier"));
  assert.deepEqual(validate(r.messages).violations, []);
});

test("Responses: a call the server runs itself (execution: server) gets no stub output", () => {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ");
  const u = (t) => ({ type: "message", role: "user", content: [{ type: "input_text", text: t }] });
  const a = (t) => ({ type: "message", role: "assistant", content: [{ type: "output_text", text: t }] });
  const search = { type: "tool_search_call", id: "tsc_1", call_id: "call_ts1", execution: "server", arguments: { query: "flight booking" }, status: "completed" };
  const found = { type: "tool_search_output", id: "tso_1", call_id: "call_ts1", execution: "server", tools: [{ type: "function", name: "book_flight", parameters: {} }], status: "completed" };
  const request = { model: "gpt-5.4", input: [u("q0 " + words(1500)), a("a0 " + words(1500)), u("find a tool to book flights and book one"), search, found, { type: "function_call", id: "fc_1", call_id: "call_b1", name: "book_flight", arguments: '{"to":"SFO"}' }, { type: "function_call_output", call_id: "call_b1", output: "booked PNR XY12" }, a("Booked, PNR XY12."), u("thanks")] };
  assert.deepEqual(validate(request).violations, []);
  const r = compactSync(request, { mode: "recency_preserving", contextWindow: 8000, protectHead: 1, protectTailMin: 6 });
  assert.ok(r.messages.includes(search) && r.messages.includes(found));
  assert.ok(!r.messages.some((m) => m.call_id === "call_ts1" && m.type === "function_call_output"), "no stub for the server's call");
  assert.deepEqual(validate(r.request).violations, []);
});

test("Responses: an output whose call is an item_reference (a stored item) is kept, and costs what it did", () => {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ");
  const u = (t) => ({ type: "message", role: "user", content: [{ type: "input_text", text: t }] });
  const output = { type: "function_call_output", call_id: "call_w1", output: "18C sunny" };
  const request = { model: "gpt-5", store: true, input: [u("q0 " + words(1500)), { type: "item_reference", id: "msg_a0" }, u("q1 " + words(1500)), { type: "item_reference", id: "msg_a1" }, u("what's the weather in Paris?"), { type: "item_reference", id: "rs_1" }, { type: "item_reference", id: "fc_1" }, output, { type: "item_reference", id: "msg_2" }, u("thanks")] };
  assert.deepEqual(validate(request).violations, []);
  const r = compactSync(request, { mode: "recency_preserving", contextWindow: 4000, protectHead: 1, protectTailMin: 6 });
  assert.ok(r.request.input.includes(output), "the output stays, the caller's own object");
  assert.ok(!JSON.stringify(r.request.input).includes("[Result from earlier"));
  // The reference counts what it did without the output after it (nothing is sent for the call it stands for).
  const alone = measure({ input: [u("x"), { type: "item_reference", id: "fc_1" }] }).perMessage[1];
  const answered = measure({ input: [u("x"), { type: "item_reference", id: "fc_1" }, output] }).perMessage[1];
  assert.equal(answered, alone);
});

test("Responses: a lost computer call's output is a blank screenshot, a lost MCP approval is declined", () => {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ");
  const u = (t) => ({ type: "message", role: "user", content: [{ type: "input_text", text: t }] });
  const a = (t) => ({ type: "message", role: "assistant", content: [{ type: "output_text", text: t }] });
  const click = { type: "computer_call", id: "cu_1", call_id: "call_cu1", action: { type: "click", x: 10, y: 20 }, pending_safety_checks: [], status: "completed" };
  const approval = { type: "mcp_approval_request", id: "mcpr_1", server_label: "deploy", name: "ship", arguments: "{}" };
  const input = [u("q0 " + words(1500)), a("a0 " + words(1500)), u("click it, then ship"), click, approval, u("never mind, stop"), a("Stopped."), u("thanks")];
  const r = compactSync({ model: "computer-use-preview", input }, { mode: "recency_preserving", contextWindow: 4000, protectHead: 1, protectTailMin: 6 });
  const shot = r.request.input.find((m) => m.call_id === "call_cu1" && m !== click);
  assert.equal(shot.type, "computer_call_output");
  assert.equal(shot.output.type, "computer_screenshot");
  assert.match(shot.output.image_url, /^data:image\/png;base64,iVBOR/);
  const declined = r.request.input.find((m) => m.approval_request_id === "mcpr_1");
  assert.deepEqual(declined, { type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: false });
  assert.ok(!r.request.input.some((m) => m.type === "function_call_output"), "no function_call_output for either");
  assert.equal(r.request.input.indexOf(declined), r.request.input.indexOf(shot) + 1, "both after the calls, before the next user message");
  assert.deepEqual(validate(r.request).violations, []);
});

test("Anthropic and Gemini: results of one turn split over two user messages join into one, none is stubbed (alternation keep and pins too)", () => {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ");
  const anthropic = [
    { role: "user", content: "q0 " + words(200) }, { role: "assistant", content: "a0 " + words(1500) },
    { role: "user", content: "read both files" },
    { role: "assistant", content: [{ type: "tool_use", id: "tA", name: "read", input: { path: "a.rs" } }, { type: "tool_use", id: "tB", name: "read", input: { path: "b.rs" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "tA", content: "AAA contents" }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "tB", content: "BBB contents" }] },
    { role: "assistant", content: "Both read." }, { role: "user", content: "thanks" }];
  const gemini = [
    { role: "user", parts: [{ text: "q0 " + words(200) }] }, { role: "model", parts: [{ text: "a0 " + words(1500) }] },
    { role: "user", parts: [{ text: "read both files" }] },
    { role: "model", parts: [{ functionCall: { id: "tA", name: "read", args: { path: "a.rs" } } }, { functionCall: { id: "tB", name: "read", args: { path: "b.rs" } } }] },
    { role: "user", parts: [{ functionResponse: { id: "tA", name: "read", response: { result: "AAA contents" } } }] },
    { role: "user", parts: [{ functionResponse: { id: "tB", name: "read", response: { result: "BBB contents" } } }] },
    { role: "model", parts: [{ text: "Both read." }] }, { role: "user", parts: [{ text: "thanks" }] }];
  for (const [request, key] of [[{ model: "claude-sonnet-4-5", max_tokens: 1000, messages: anthropic }, "messages"], [{ contents: gemini }, "contents"]]) {
    // (Anthropic merges consecutive user turns: valid there; Gemini flags it)
    assert.equal(validate(request).violations.length > 0, key === "contents", `${key}: the split in the input`);
    for (const [mode, extra] of ["recency_preserving", "deterministic"].flatMap((m) => [{}, { alternation: "keep" }, { pin: [4] }, { pin: [5] }, { alternation: "keep", pin: [3] }].map((o) => [m, o]))) {
      const r = compactSync(request, { mode, contextWindow: 4000, protectHead: 1, protectTailMin: 5, ...extra });
      const text = JSON.stringify(r.request[key]);
      const what = `${key} ${mode} ${JSON.stringify(extra)}`;
      assert.ok(!text.includes("[Result from earlier"), `${what}: no stub`);
      assert.deepEqual(validate(r.request).violations, [], what);
      if (mode === "recency_preserving") {
        assert.ok(text.includes("AAA contents") && text.includes("BBB contents"), `${key}: both results kept`);
        const answers = r.request[key].filter((m) => JSON.stringify(m).includes("contents\""));
        assert.equal(answers.length, 1, `${key}: one user turn answers both calls`);
      }
    }
  }
});

test("Responses: an input given as one string is one user message (measured and validated; nothing to compact)", async () => {
  const request = { model: "gpt-5", instructions: "Be brief.", input: "Write a haiku about the sea." };
  const asItems = { ...request, input: [{ role: "user", content: request.input }] };
  const m = measure(request);
  assert.equal(m.format, "openai-responses");
  assert.equal(m.perMessage.length, 1);
  assert.equal(m.tokens, measure(asItems).tokens);
  assert.deepEqual(measure(request), m, "again, the same");
  assert.deepEqual(validate(request).violations, []);
  for (const mode of ["recency_preserving", "deterministic"]) {
    assert.throws(() => compactSync(request, { mode }), (e) => e.code === "TOO_SMALL_TO_COMPACT", mode);
  }
  await assert.rejects(compact(request, { mode: "llm_replace", summarize: () => "x" }), (e) => e.code === "TOO_SMALL_TO_COMPACT");
});

test("Responses: a local_shell_call_output names its call by id (documented) or call_id (as many write it)", () => {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ");
  const u = (t) => ({ type: "message", role: "user", content: [{ type: "input_text", text: t }] });
  const a = (t) => ({ type: "message", role: "assistant", content: [{ type: "output_text", text: t }] });
  const shell = (k) => ({ type: "local_shell_call", id: `lsh_${k}`, call_id: `call_${k}`, action: { type: "exec", command: ["ls"] }, status: "completed" });
  const input = [u("q0 " + words(1500)), a("a0 " + words(1500)), u("list files"), shell(1), { type: "local_shell_call_output", id: "call_1", output: '{"output":"a.rs"}' }, shell(2), { type: "local_shell_call_output", call_id: "call_2", output: '{"output":"b.rs"}' }, shell(3), a("Listed."), u("thanks")];
  assert.deepEqual(validate({ model: "codex-mini-latest", input }).violations.map((v) => [v.index, v.code]), [[7, "MISSING_RESULT"]]);
  const r = compactSync({ model: "codex-mini-latest", input }, { mode: "recency_preserving", contextWindow: 4000, protectHead: 1, protectTailMin: 8 });
  assert.ok(r.request.input.includes(input[4]) && r.request.input.includes(input[6]), "both outputs kept");
  const stub = r.request.input.find((m) => m.call_id === "call_3" && m !== input[7]);
  assert.equal(stub.type, "function_call_output");
  assert.deepEqual(validate(r.request).violations, []);
});
