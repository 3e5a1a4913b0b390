// The incremental benchmark (issue #9): the package in Node on the synthetic
// 2,000-message agent history, objects in and out, medians. Cold = the first
// call on message objects the library has not seen (a compaction keeps nothing
// of a history it has not seen, the meter keeps what it reads); 2nd call = the
// next call on the same objects (a compaction's fills the cache); warm = the
// next call after one message was appended. LangChain's trimMessages runs on the same history
// and budget for scale. Run after a build: `node bench/speed.mjs`.
import { trimMessages, AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import * as cc from "../pkg/node.js";
import { syntheticAgentHistory } from "./histories.mjs";

const WINDOW = 40000;
const RUNS = 31;
const WARM_RUNS = 101;

/** Median of `runs` timings of `f(setup())`, setup untimed. */
async function median(runs, setup, f) {
  await f(setup());
  const t = [];
  for (let i = 0; i < runs; i++) {
    const input = setup();
    const s = performance.now();
    await f(input);
    t.push(performance.now() - s);
  }
  t.sort((a, b) => a - b);
  return t[runs >> 1];
}

const fmt = (ms) => `${ms.toFixed(3).padStart(8)} ms`;
const clone = (h) => h.map((m) => structuredClone(m));

/** One more turn of the conversation. */
let turn = 0;
const nextMessage = () => ({ role: "user", content: `And another thing (${turn++}): check src/extra.rs too.` });

/** Deep-freezes `v`, as Immer and Redux Toolkit leave state. */
const deepFreeze = (v) => {
  if (v !== null && typeof v === "object") {
    Object.values(v).forEach(deepFreeze);
    Object.freeze(v);
  }
  return v;
};

/**
 * Cold, second and warm medians of `f(history)` on an n-message history
 * (`prepare`: applied to each fresh copy); `second`: also the second call on
 * the same objects (for a compaction, the one that fills the cache).
 */
async function coldWarm(n, f, prepare = (h) => h, second = false) {
  const base = syntheticAgentHistory(n);
  const cold = await median(RUNS, () => prepare(clone(base)), f);
  const again = second ? await median(RUNS, () => { const h = prepare(clone(base)); f(h); return h; }, f) : undefined;
  // Warm: the same objects, one message appended since the last call.
  const growing = prepare(clone(base));
  f(growing);
  // (more runs: a warm call is short, and its first runs still warm up the JIT)
  const warm = await median(WARM_RUNS, () => (growing.push(nextMessage()), growing), f);
  return { cold, again, warm };
}

const calls = {
  measure: (h) => cc.measure(h, { contextWindow: WINDOW }),
  recency_preserving: (h) => cc.compactSync(h, { mode: "recency_preserving", contextWindow: WINDOW }),
  deterministic: (h) => cc.compactSync(h, { mode: "deterministic", contextWindow: WINDOW }),
};

const history = syntheticAgentHistory(2000);
const mb = (JSON.stringify(history).length / 1e6).toFixed(2);
console.log(`synthetic agent history: ${history.length} messages, ${mb} MB; window ${WINDOW}, threshold ${Math.round(WINDOW * 0.95)}`);
console.log(`${"call".padEnd(36)} ${"cold".padStart(11)} ${"warm (+1 message)".padStart(19)} ${"2nd call, same objects".padStart(24)}`);
for (const [name, f] of Object.entries(calls)) {
  const { cold, again, warm } = await coldWarm(2000, f, undefined, true);
  console.log(`${`chat-compaction ${name}`.padEnd(36)} ${fmt(cold)} ${fmt(warm).padStart(19)} ${fmt(again).padStart(24)}`);
}

// LangChain trimMessages on the same history and budget (keep the last messages
// that fit; its token counter: characters / 4, the usual approximation).
const toLangChain = (h) =>
  h.map((m) => {
    if (m.role === "system") return new SystemMessage(m.content);
    if (m.role === "user") return new HumanMessage(m.content);
    if (m.role === "tool") return new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id });
    return new AIMessage({ content: m.content, tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })) });
  });
const approx = (msgs) => msgs.reduce((sum, m) => sum + Math.ceil(String(m.content).length / 4) + 4, 0);
const lc = toLangChain(history);
const trim = (msgs) => trimMessages(msgs, { maxTokens: Math.round(WINDOW * 0.95), strategy: "last", tokenCounter: approx, includeSystem: true, startOn: "human" });
const lcMs = await median(RUNS, () => lc, trim);
const kept = (await trim(lc)).length;
console.log(`${"LangChain trimMessages (chars/4)".padEnd(36)} ${fmt(lcMs)} ${"(no cache)".padStart(19)}   keeps ${kept} of ${lc.length}`);
// What reading the objects costs at all: V8's own native serializer over the
// same fresh copies (a floor under any cold call that takes objects in).
const floor = await median(RUNS, () => clone(history), (h) => JSON.stringify(h));
console.log(`${"JSON.stringify (reading the objects)".padEnd(36)} ${fmt(floor)}`);

// An app that keeps its state frozen: a frozen message is taken from the cache
// without comparing it.
console.log("\ndeeply frozen messages (Immer, Redux Toolkit, Object.freeze):");
for (const [name, f] of Object.entries(calls)) {
  const { cold, again, warm } = await coldWarm(2000, f, (h) => h.map(deepFreeze), true);
  console.log(`${`chat-compaction ${name}`.padEnd(36)} ${fmt(cold)} ${fmt(warm).padStart(19)} ${fmt(again).padStart(24)}`);
}

const ours = cc.compactSync(history, { mode: "recency_preserving", contextWindow: WINDOW });
console.log(`(recency_preserving keeps ${ours.messages.length} of ${history.length}: head, marker, tail; ${ours.notice.tokensAfter} estimated tokens)`);

console.log("\nper-message cost (recency_preserving):");
for (const n of [200, 2000, 20000]) {
  const { cold, warm } = await coldWarm(n, calls.recency_preserving);
  const us = (ms) => `${((ms * 1000) / n).toFixed(2).padStart(6)} µs/message`;
  console.log(`${String(n).padStart(6)} messages: cold ${fmt(cold)} (${us(cold)})   warm ${fmt(warm)} (${us(warm)})`);
}
