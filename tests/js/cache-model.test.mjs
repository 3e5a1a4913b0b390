// The per-message cache against a model: random sequences of what a chat UI does
// to its history between calls (grow it, stream into a message in place, replace,
// remove, move and freeze messages, let another format's message in) and of
// calls (the meter, the estimate, both offline modes; arrays and requests; other
// tokenizers, forced formats). After every step a cached call must answer
// exactly what an uncached one does — the same result or the same error — and
// leave the history as it was. fast-check shrinks a failure to the shortest
// sequence; `FC_SEED=… FC_RUNS=…` replays or widens a run.
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
    { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: body(i) }] },
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

/** Every [container, key] holding a string inside `v`. */
function stringSlots(v, out = []) {
  if (v !== null && typeof v === "object") {
    for (const k of Object.keys(v)) {
      if (typeof v[k] === "string") out.push([v, k]);
      else stringSlots(v[k], out);
    }
  }
  return out;
}

const op = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("append"), rounds: fc.integer({ min: 1, max: 3 }) }) },
  // In place, as a streaming reply grows: longer, shorter, or its first character changed.
  // Mostly texts; now and then any string (a role, an id: the history may turn invalid).
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("edit"), at: fc.nat(), slot: fc.nat(), how: fc.constantFrom("grow", "shrink", "first"), anyKey: fc.nat(4).map((n) => n === 0) }),
  },
  fc.record({ kind: fc.constant("replace"), at: fc.nat() }),
  fc.record({ kind: fc.constant("remove"), at: fc.nat() }),
  fc.record({ kind: fc.constant("move"), from: fc.nat(), to: fc.nat() }),
  fc.record({ kind: fc.constant("freeze"), at: fc.nat() }),
  fc.record({ kind: fc.constant("foreign"), which: fc.nat(FOREIGN.length - 1) }),
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("call"),
      fn: fc.constantFrom("measure", "estimateTokens", "deterministic", "recency_preserving"),
      contextWindow: fc.constantFrom(1500, 6000, 200000),
      tokenizer: fc.constantFrom(undefined, "claude", "cl100k"),
      request: fc.boolean(),
      forced: fc.boolean(),
    }),
  },
);

/** The call's answer, or its error's code and message. */
function outcome(f) {
  try {
    return { ok: f() };
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
  const pick = (i) => i % h.length;
  for (const o of ops) {
    switch (o.kind) {
      case "append":
        grow(o.rounds);
        break;
      case "edit": {
        if (h.length === 0) break;
        const i = pick(o.at);
        // A frozen message cannot be edited: the app replaces it (as Immer does).
        if (Object.isFrozen(h[i])) h[i] = structuredClone(h[i]);
        const slots = stringSlots(h[i]).filter(([container, key]) => !Object.isFrozen(container) && (o.anyKey || !STRUCTURAL.has(key)));
        if (slots.length === 0) break;
        const [container, key] = slots[o.slot % slots.length];
        const s = container[key];
        if (o.how === "grow") container[key] = `${s} and more`;
        else if (o.how === "shrink") container[key] = s.length > 1 ? s.slice(0, -1) : `${s}x`;
        else container[key] = (s[0] === "Z" ? "Y" : "Z") + s.slice(1);
        break;
      }
      case "replace":
        if (h.length > 0) h[pick(o.at)] = structuredClone(h[pick(o.at)]);
        break;
      case "remove":
        if (h.length > 1) h.splice(pick(o.at), 1);
        break;
      case "move":
        if (h.length > 1) h.splice(pick(o.to), 0, ...h.splice(pick(o.from), 1));
        break;
      case "freeze":
        if (h.length > 0) deepFreeze(h[pick(o.at)]);
        break;
      case "foreign":
        h.push(structuredClone(FOREIGN[o.which]));
        break;
      case "call": {
        const input = o.request ? REQUESTS[format](h) : h;
        const options = { contextWindow: o.contextWindow, tokenizer: o.tokenizer, format: o.forced ? format : undefined };
        const call = {
          measure: (extra) => measure(input, { ...options, ...extra }, "pending words"),
          estimateTokens: (extra) => estimateTokens(input, { ...options, ...extra }),
          deterministic: (extra) => compactSync(input, { ...options, ...extra, mode: "deterministic" }),
          recency_preserving: (extra) => compactSync(input, { ...options, ...extra, mode: "recency_preserving" }),
        }[o.fn];
        const before = JSON.stringify(h);
        const cached = outcome(() => call({}));
        assert.equal(JSON.stringify(h), before, "the history is left as it was");
        assert.deepEqual(cached, outcome(() => call({ cache: false })), `${format} ${o.fn}`);
        if (process.env.FC_TALLY) tally[cached.code ?? "ok"] = (tally[cached.code ?? "ok"] ?? 0) + 1;
        break;
      }
    }
  }
}

/** With FC_TALLY set: how the calls ended, printed per format (to see that the runs reach every path). */
const tally = {};

const params = { numRuns: Number(process.env.FC_RUNS ?? 100), seed: Number(process.env.FC_SEED ?? 20261203) };

for (const format of Object.keys(ROUNDS)) {
  test(`${format}: random growth, edits and calls — the cache never changes an answer`, () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40, size: "medium" }), (ops) => run(format, ops)),
      params,
    );
    if (process.env.FC_TALLY) console.log(format, JSON.stringify(tally));
    for (const k of Object.keys(tally)) delete tally[k];
  });
}
