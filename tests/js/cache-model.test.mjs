// The per-message cache against a model: random sequences of what a chat UI does
// to its history between calls (grow it, stream into a message in place, replace,
// remove, move and freeze messages, let another format's message in and take it
// out again) and of calls (the meter, the estimate, both offline modes; arrays
// and requests; other tokenizers, forced formats, pins). After every step a
// cached call must answer exactly what an uncached one does — the same result,
// keeping the same input messages, or the same error — and leave the history as
// it was. fast-check shrinks a failure to a short sequence; `FC_SEED=… FC_RUNS=…`
// replays or widens a run. What this cannot see: a cache bug that costs only
// time (a needless retry, a miss); the benchmark shows those. A caller's
// `countTokens`, a `pin` function, getters and `toJSON` are meter.test.mjs's.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CompactionError, compactSync, estimateTokens, measure } from "../../pkg/node.js";
import { FORMATS } from "./histories.mjs";

const body = (i) => `output of step ${i}: ` + "lorem ipsum dolor sit amet ".repeat(12 + (i % 5) * 9);

/** One round of a conversation in each format, numbered `i`. */
const ROUNDS = {
  openai: (i) => [
    { role: "user", content: `Step ${i}: read src/m${i}.rs, please.` },
    { role: "assistant", content: null, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "read", arguments: JSON.stringify({ path: `src/m${i}.rs` }) } }] },
    { role: "tool", tool_call_id: `c${i}`, content: body(i) },
    { role: "assistant", content: `Read m${i}. Next: the tests.`, requestInputTokens: 900 + i },
  ],
  anthropic: (i) => [
    { role: "user", content: `Step ${i}: read src/m${i}.rs, please.` },
    { role: "assistant", content: [{ type: "thinking", thinking: `step ${i}`, signature: `sig${i}` }, { type: "tool_use", id: `t${i}`, name: "read", input: { path: `src/m${i}.rs` } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: body(i), is_error: false }] },
    { role: "assistant", content: [{ type: "text", text: `Read m${i}. TODO: the tests.` }] },
  ],
  moltis: (i) => [
    { role: "user", content: `Step ${i}: read src/m${i}.rs, please.`, created_at: 10 * i },
    { role: "assistant", content: "", tool_calls: [{ id: `c${i}`, type: "function", function: { name: "read", arguments: `{"path":"src/m${i}.rs"}` } }], created_at: 10 * i + 1 },
    { role: "tool_result", tool_call_id: `c${i}`, tool_name: "read", content: body(i), created_at: 10 * i + 2 },
    { role: "notice", content: `checkpoint ${i}`, created_at: 10 * i + 3 },
    { role: "assistant", content: `Read m${i}.`, created_at: 10 * i + 4 },
  ],
  ...Object.fromEntries(
    Object.entries(FORMATS).map(([format, f]) => {
      // The generator's first messages open the conversation; a round is what follows.
      const opening = f.history(0).length;
      const perRound = f.history(1).length - opening;
      return [format, (i) => f.history(i + 1).slice(opening + i * perRound)];
    }),
  ),
};

/** What each format's history opens with (a system prompt, the first request). */
const OPENINGS = {
  openai: () => [{ role: "system", content: "You are a coding agent." }],
  anthropic: () => [],
  moltis: () => [{ role: "system", content: "You are a coding agent.", created_at: 0 }],
  ...Object.fromEntries(Object.entries(FORMATS).map(([format, f]) => [format, () => f.history(0)])),
};

const REQUESTS = {
  openai: (h) => ({ model: "gpt-4o", messages: h, max_tokens: 500 }),
  anthropic: (h) => ({ model: "claude-sonnet-4-5", system: "Be brief.", messages: h, max_tokens: 800 }),
  moltis: (h) => ({ messages: h }),
  ...Object.fromEntries(Object.entries(FORMATS).map(([format, f]) => [format, f.request])),
};

/** A message that only another format has (the history may read as another format, or not at all). */
const FOREIGN = [
  { role: "notice", content: "a Moltis notice" },
  { role: "user", content: [{ type: "text", text: "an Anthropic block" }] },
  { role: "user", parts: [{ text: "a Gemini part" }] },
];

const deepFreeze = (v) => {
  if (v !== null && typeof v === "object") {
    Object.values(v).forEach(deepFreeze);
    Object.freeze(v);
  }
  return v;
};

/** Keys whose strings hold a history together (roles, types, ids, tool names). */
const STRUCTURAL = new Set(["role", "type", "id", "tool_call_id", "call_id", "tool_use_id", "toolCallId", "toolName", "name", "state", "tool_name"]);

/** Every [container, key] holding a value of `type` inside `v`. */
function slots(v, type, out = []) {
  if (v !== null && typeof v === "object") {
    for (const k of Object.keys(v)) {
      if (typeof v[k] === type) out.push([v, k]);
      else slots(v[k], type, out);
    }
  }
  return out;
}

/** `s` with the character at `i` changed (same length in UTF-16; an ideograph, so that the estimate tells too). */
const changedAt = (s, i) => s.slice(0, i) + (s[i] === "語" ? "字" : "語") + s.slice(i + 1);

/** What an edit does to a string: a streamed reply grows; the rest keep or change its length. */
const EDITS = {
  grow: (s) => `${s} and more`,
  shrink: (s) => (s.length > 1 ? s.slice(0, -1) : `${s}x`),
  // Edits that keep the length: at either end, in the middle, or anywhere else.
  first: (s) => changedAt(s, 0),
  middle: (s) => changedAt(s, s.length >> 1),
  last: (s) => changedAt(s, s.length - 1),
  inner: (s) => changedAt(s, Math.min(1, s.length - 1)),
};

const op = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("append"), rounds: fc.integer({ min: 1, max: 3 }) }) },
  // A string changed in place (see EDITS): mostly texts; now and then any string
  // (a role, an id: the history may turn invalid until undone).
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("edit"), at: fc.nat(), slot: fc.nat(), how: fc.constantFrom(...Object.keys(EDITS)), anyKey: fc.nat(4).map((n) => n === 0) }),
  },
  // A number (provider usage, a timestamp) or a boolean (a Gemini thought) changed in place.
  fc.record({ kind: fc.constant("scalar"), at: fc.nat(), slot: fc.nat() }),
  // A key renamed in place, its value kept (the history may turn invalid until undone).
  fc.record({ kind: fc.constant("rename"), at: fc.nat(), slot: fc.nat() }),
  fc.record({ kind: fc.constant("replace"), at: fc.nat() }),
  fc.record({ kind: fc.constant("remove"), at: fc.nat() }),
  fc.record({ kind: fc.constant("move"), from: fc.nat(), to: fc.nat() }),
  fc.record({ kind: fc.constant("freeze"), at: fc.nat() }),
  fc.record({ kind: fc.constant("foreign"), which: fc.nat(FOREIGN.length - 1) }),
  // Takes back the newest foreign message or edit of any string, so that runs do not stay invalid.
  { weight: 2, arbitrary: fc.constant({ kind: "undo" }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("call"),
      fn: fc.constantFrom("measure", "estimateTokens", "deterministic", "recency_preserving"),
      contextWindow: fc.constantFrom(1500, 6000, 200000),
      tokenizer: fc.constantFrom(undefined, "claude", "cl100k"),
      request: fc.boolean(),
      forced: fc.boolean(),
      pinned: fc.boolean(),
    }),
  },
);

/** The call's answer (with which messages of `h` a compaction kept), or its error's code and message. */
function outcome(f, h) {
  try {
    const ok = f();
    return ok.messages === undefined ? { ok } : { ok, kept: ok.messages.map((m) => h.indexOf(m)) };
  } catch (e) {
    if (!(e instanceof CompactionError)) throw e;
    return { code: e.code, message: e.message };
  }
}

function run(format, ops) {
  const round = ROUNDS[format];
  let rounds = 0;
  const h = OPENINGS[format]();
  const grow = (n) => {
    for (let k = 0; k < n; k++) h.push(...round(rounds++));
  };
  grow(3);
  /** Takes back what may have made the history invalid, newest first. */
  const undo = [];
  const pick = (i) => i % h.length;
  /** Message `i`, replaced by a copy first when frozen (as Immer does: a frozen message is never edited). */
  const editable = (i) => {
    if (Object.isFrozen(h[i])) h[i] = structuredClone(h[i]);
    return h[i];
  };
  for (const o of ops) {
    switch (o.kind) {
      case "append":
        grow(o.rounds);
        break;
      case "edit": {
        const strings = slots(editable(pick(o.at)), "string").filter(([, key]) => o.anyKey || !STRUCTURAL.has(key));
        if (strings.length === 0) break;
        const [container, key] = strings[o.slot % strings.length];
        const before = container[key];
        container[key] = EDITS[o.how](before);
        if (o.anyKey) undo.push(() => !Object.isFrozen(container) && (container[key] = before));
        break;
      }
      case "scalar": {
        const message = editable(pick(o.at));
        const found = [...slots(message, "number"), ...slots(message, "boolean")];
        if (found.length === 0) break;
        const [container, key] = found[o.slot % found.length];
        container[key] = typeof container[key] === "boolean" ? !container[key] : container[key] + 7;
        break;
      }
      case "rename": {
        const keys = slots(editable(pick(o.at)), "string");
        if (keys.length === 0) break;
        const [container, key] = keys[o.slot % keys.length];
        const value = container[key];
        delete container[key];
        container[`${key}_`] = value;
        undo.push(() => {
          if (Object.isFrozen(container)) return;
          delete container[`${key}_`];
          container[key] = value;
        });
        break;
      }
      case "replace":
        h[pick(o.at)] = structuredClone(h[pick(o.at)]);
        break;
      case "remove":
        if (h.length > 1) h.splice(pick(o.at), 1);
        break;
      case "move":
        h.splice(pick(o.to), 0, ...h.splice(pick(o.from), 1));
        break;
      case "freeze":
        deepFreeze(h[pick(o.at)]);
        break;
      case "foreign": {
        const message = structuredClone(FOREIGN[o.which]);
        h.push(message);
        undo.push(() => h.includes(message) && h.splice(h.indexOf(message), 1));
        break;
      }
      case "undo":
        undo.pop()?.();
        break;
      case "call": {
        const input = o.request ? REQUESTS[format](h) : h;
        const options = { contextWindow: o.contextWindow, tokenizer: o.tokenizer, format: o.forced ? format : undefined, pin: o.pinned ? [1] : undefined };
        const call = {
          measure: (extra) => measure(input, { ...options, ...extra }, "pending words"),
          estimateTokens: (extra) => estimateTokens(input, { ...options, ...extra }),
          deterministic: (extra) => compactSync(input, { ...options, ...extra, mode: "deterministic" }),
          recency_preserving: (extra) => compactSync(input, { ...options, ...extra, mode: "recency_preserving" }),
        }[o.fn];
        const before = JSON.stringify(h);
        const cached = outcome(() => call({}), h);
        assert.equal(JSON.stringify(h), before, "the history is left as it was");
        assert.deepEqual(cached, outcome(() => call({ cache: false }), h), `${format} ${o.fn}`);
        break;
      }
    }
  }
}

const params = { numRuns: Number(process.env.FC_RUNS ?? 100), seed: Number(process.env.FC_SEED ?? 20261203) };

for (const format of Object.keys(ROUNDS)) {
  test(`${format}: random growth, edits and calls — the cache never changes an answer`, () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40, size: "medium" }), (ops) => run(format, ops)),
      params,
    );
  });
}
