// What a compaction adds (a summary or a marker, a user message) goes where the
// provider takes it: never behind an assistant that now opens the messages or
// follows another assistant it was not next to, never between a running call
// and the results about to be appended (checked with the package's own
// `validate`, which knows each provider's rules). Merged into a neighbouring
// user message (alternation "merge"), a later compaction still finds it and
// replaces it: summaries and markers never pile up, and the caller's content
// it was merged with stays.
import { test } from "node:test";
import assert from "node:assert/strict";
import { compact, compactSync, validate } from "../../pkg/node.js";

const HEADINGS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps", "## Critical Context"];
const summarize = () => HEADINGS.map((h) => (h === "## Progress" ? h : `${h}\nnoted`)).join("\n");
/** `n` bytes of varied words. */
const filler = (n) => Array.from({ length: Math.ceil(n / 6) }, (_, i) => `w${(i * 7919) % 1000} `).join("").slice(0, n);
const violations = (history, options) => validate(history, options).violations.map((v) => v.code);
const roles = (messages) => messages.map((m) => m.role).join(",");
const isAdded = (m) => JSON.stringify(m).includes("[Conversation Summary]") || JSON.stringify(m).includes("[Conversation Compacted]");

test("a structured compaction that replaces a summary opening the head still opens with a user turn", async () => {
  const first = compactSync({ model: "claude-sonnet-4-5", max_tokens: 1024, system: "Be helpful.", messages: [{ role: "user", content: "start " + filler(3000) }, ...Array.from({ length: 21 }, (_, i) => ({ role: i % 2 ? "user" : "assistant", content: `turn ${i} ` + filler(1500) }))] }, { contextWindow: 8000 });
  assert.equal(first.messages[0].role, "user");
  const next = { ...first.request, messages: [...first.request.messages, ...Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? "user" : "assistant", content: `later ${i} ` + filler(1500) }))] };
  const r = await compact(next, { mode: "structured", contextWindow: 8000, summarize });
  assert.equal(r.notice.mode, "structured");
  assert.equal(r.request.messages[0].role, "user", roles(r.request.messages));
  assert.ok(isAdded(r.request.messages[0]), "the new summary opens the messages");
  assert.deepEqual(violations(r.request, { provider: "anthropic" }), []);
});

test("pins that lead or follow an assistant get the added message before them (Anthropic, Gemini)", async () => {
  const anthropic = { system: "s", messages: [{ role: "user", content: "q1" }, { role: "assistant", content: "We decided: use Postgres." }, { role: "user", content: "q2" }, { role: "assistant", content: "a2" }, { role: "user", content: "q3" }] };
  const replaced = await compact(anthropic, { mode: "llm_replace", summarize, pin: [1] });
  assert.equal(roles(replaced.request.messages), "user,assistant,user");
  assert.ok(isAdded(replaced.request.messages[0]));
  assert.equal(replaced.request.messages[1], anthropic.messages[1], "the pin stays the caller's object");
  assert.equal(replaced.request.messages[2], anthropic.messages[4], "so does the newest request, after it");
  const long = { system: "s", messages: [{ role: "user", content: "q1 " + filler(4000) }, { role: "assistant", content: "a1: we use Postgres" }, { role: "user", content: "q2 " + filler(4000) }, { role: "assistant", content: "a2 " + filler(4000) }, { role: "user", content: "q3" }] };
  const marked = compactSync(long, { mode: "recency_preserving", pin: [1], protectHead: 0, protectTailMin: 1, contextWindow: 4000 });
  assert.ok(isAdded(marked.request.messages[0]), roles(marked.request.messages));
  assert.deepEqual(violations(marked.request, { provider: "anthropic" }), []);

  const U = (t) => ({ role: "user", parts: [{ text: t }] });
  const M = (t) => ({ role: "model", parts: [{ text: t }] });
  const call = { role: "model", parts: [{ functionCall: { name: "read", args: { path: "x" } } }] };
  const answer = { role: "user", parts: [{ functionResponse: { name: "read", response: { result: "XX" } } }] };
  const gemini = [U("start"), M("ok"), U("q1 " + filler(3000)), M("a1 " + filler(3000)), U("q2"), call, answer, M("after " + filler(3000)), U("q3 " + filler(3000)), M("a3 " + filler(3000)), U("latest"), M("done")];
  const r = compactSync(gemini, { mode: "recency_preserving", contextWindow: 4000, protectHead: 2, protectTailMin: 2, pin: [5] });
  const at = r.messages.indexOf(call);
  assert.ok(at > 0 && isAdded(r.messages[at - 1]), "the marker goes between the head's model turn and the pinned call");
  assert.deepEqual(violations(r.messages), []);
  for (const mode of ["llm_replace", "deterministic"]) {
    const gem = [U("q1"), call, answer, M("a1"), U("q2"), M("a2")];
    const out = mode === "deterministic" ? compactSync(gem, { mode, pin: [1] }) : await compact(gem, { mode, summarize, pin: [1] });
    assert.ok(isAdded(out.messages[0]), `${mode}: ${roles(out.messages)}`);
    assert.deepEqual(violations(out.messages), [], mode);
  }
});

test("a call still running at the end (pinned or not) keeps its place last, after the summary", async () => {
  const running = { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "make" } }] };
  const history = [{ role: "user", content: "q1 " + filler(3000) }, { role: "assistant", content: "a1 " + filler(3000) }, { role: "user", content: "run the build" }, running];
  for (const [mode, pins] of [["deterministic", { pinRoles: ["assistant"] }], ["llm_replace", { pinRoles: ["assistant"] }], ["deterministic", {}], ["llm_replace", {}]]) {
    const r = mode === "deterministic" ? compactSync(history, { mode, ...pins }) : await compact(history, { mode, summarize, ...pins });
    assert.equal(r.messages.at(-1), running, mode);
    assert.ok(isAdded(r.messages.at(-2)), `${mode}: the summary right before it`);
    // The result arrives next, right after its call.
    const appended = [...r.messages, { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "bash", output: { type: "text", value: "ok" } }] }];
    assert.deepEqual(violations(appended), [], mode);
  }
});

/** `rounds` compactions of a conversation that goes on after each; returns the last result and every summarizer request. */
async function rounds(history, options, rounds, more) {
  const asked = [];
  let r;
  for (let round = 1; round <= rounds; round++) {
    history = { ...history, messages: [...history.messages, ...more(round)] };
    const o = { ...options, summarize: (request) => (asked.push(request), summarize()) };
    r = options.mode === "structured" ? await compact(history, o) : compactSync(history, o);
    history = r.request;
  }
  return { r, asked };
}
const count = (messages, prefix) => JSON.stringify(messages).split(prefix).length - 1;

test("a summary or marker merged into the head's user message is replaced by the next compaction (Anthropic, OpenAI merge)", async () => {
  const turn = (round) => [{ role: "assistant", content: `a${round} ` + filler(6000) }, { role: "user", content: "x " + filler(6000) }, { role: "assistant", content: "b " + filler(6000) }, { role: "user", content: `r${round}` }];
  const start = { system: "sys", messages: [{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }, { role: "user", content: "q1" }] };
  const { r, asked } = await rounds(start, { mode: "structured", contextWindow: 6000, protectTailMin: 1 }, 4, turn);
  assert.equal(count(r.request.messages, "[Conversation Summary]"), 1);
  assert.deepEqual(asked.map((q) => Boolean(q.previousSummary)), [false, true, true, true]);
  assert.equal(r.request.messages[2].content[0].text, "q1", "the head's own text stays");
  // The request merged in after the old summary is summarized (read first), not kept in the head.
  assert.deepEqual(r.request.messages[2].content.map((p) => p.text.slice(0, 22)), ["q1", "[Conversation Summary]", "r4"]);
  assert.ok(JSON.stringify(asked[3].messages).includes('"r3"'), "the summarizer reads the request the head held");
  assert.deepEqual(violations(r.request, { provider: "anthropic" }), []);

  const marked = await rounds(start, { mode: "recency_preserving", contextWindow: 6000, protectTailMin: 1 }, 4, turn);
  const messages = marked.r.request.messages;
  assert.equal(count(messages, "[Conversation Compacted]"), 1);
  // The head's message holds its own text, the marker and the tail's first request
  // merged in after it; the next marker stands for that request too, so the
  // totals run on (3 elided in the first round, 4 more in each later one).
  const [own, marker, request] = messages[2].content.map((p) => p.text);
  assert.equal(own, "q1");
  assert.equal(request, "r4");
  assert.match(marker, /^\[Conversation Compacted\]\n\n15 earlier messages were elided .*\(7 user, 8 assistant, 0 tool\)/);
  assert.match(marker, /- Earlier user request: r3\n/);

  const openai = await rounds({ messages: [{ role: "system", content: "sys" }, ...start.messages] }, { mode: "recency_preserving", contextWindow: 6000, protectTailMin: 1, protectHead: 4, alternation: "merge" }, 3, turn);
  assert.equal(count(openai.r.messages, "[Conversation Compacted]"), 1);
  assert.deepEqual(violations(openai.r.messages, { strictAlternation: true }), []);
});

test("a tool result in the head's message that a summary was merged into stays through the next compaction", async () => {
  const start = { system: "sys", messages: [
    { role: "user", content: "read config" },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: { path: "config.toml" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "port = 8080" }] },
  ] };
  const turn = (round) => [{ role: "assistant", content: `a${round} ` + filler(6000) }, { role: "user", content: "q " + filler(6000) }, { role: "assistant", content: "b " + filler(6000) }, { role: "user", content: `r${round}` }];
  const { r } = await rounds(start, { mode: "structured", contextWindow: 6000, protectTailMin: 1 }, 2, turn);
  const head = r.request.messages[2].content;
  assert.deepEqual(head[0], { type: "tool_result", tool_use_id: "t1", content: "port = 8080" });
  assert.equal(count(r.request.messages, "[Conversation Summary]"), 1);
  assert.deepEqual(violations(r.request, { provider: "anthropic" }), []);

  // Gemini: the functionResponse part stays the same way.
  const g = [
    { role: "user", parts: [{ text: "read config" }] },
    { role: "model", parts: [{ functionCall: { name: "read", args: { path: "config.toml" } } }] },
    { role: "user", parts: [{ functionResponse: { name: "read", response: { result: "port = 8080" } } }] },
  ];
  const gturn = (round) => [{ role: "model", parts: [{ text: `a${round} ` + filler(6000) }] }, { role: "user", parts: [{ text: "q " + filler(6000) }] }, { role: "model", parts: [{ text: "b " + filler(6000) }] }, { role: "user", parts: [{ text: `r${round}` }] }];
  let history = g;
  for (let round = 1; round <= 2; round++) {
    history = [...history, ...gturn(round)];
    history = (await compact(history, { mode: "structured", contextWindow: 6000, protectTailMin: 1, summarize })).messages;
  }
  assert.ok(JSON.stringify(history[2]).includes("port = 8080"));
  assert.equal(count(history, "[Conversation Summary]"), 1);
  assert.deepEqual(violations(history), []);
});

test("a turn still running at the end (pinned or not) keeps its items together after the summary (Responses reasoning, parallel calls, a partly answered call)", async () => {
  const responses = [
    { role: "user", content: "q1 " + filler(3000) },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "a1 " + filler(3000) }] },
    { role: "user", content: "run the build" },
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "ENC" },
    { type: "function_call", call_id: "c1", name: "bash", arguments: '{"cmd":"make"}' },
    { type: "function_call", call_id: "c2", name: "bash", arguments: '{"cmd":"test"}' },
  ];
  const openai = [{ role: "system", content: "sys" }, { role: "user", content: "q1 " + filler(3000) }, { role: "assistant", content: "a1 " + filler(3000) }, { role: "user", content: "read and build" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }, { id: "c2", type: "function", function: { name: "bash", arguments: '{"cmd":"make"}' } }] },
    { role: "tool", tool_call_id: "c1", content: "file text" }];
  for (const [mode, pins] of [["deterministic", { pinRoles: ["assistant"] }], ["llm_replace", { pinRoles: ["assistant"] }], ["deterministic", {}], ["llm_replace", {}]]) {
    const run = (h, o) => (mode === "deterministic" ? compactSync(h, { mode, ...o }) : compact(h, { mode, summarize, ...o }));
    const r = await run({ input: responses }, { ...pins, format: "openai-responses" });
    assert.deepEqual(r.request.input.slice(-3), responses.slice(-3), `${mode}: reasoning and both calls last, together`);
    const answered = [...r.request.input, { type: "function_call_output", call_id: "c1", output: "ok" }, { type: "function_call_output", call_id: "c2", output: "ok" }];
    assert.deepEqual(violations({ input: answered }), [], mode);
    const o = await run(openai, pins);
    assert.deepEqual(o.messages.slice(-2), openai.slice(-2), `${mode}: the call and its first answer last`);
    assert.deepEqual(violations([...o.messages, { role: "tool", tool_call_id: "c2", content: "build ok" }]), [], mode);
  }
  // A last assistant whose calls are answered inline is not running: the summary stays before it only where it was.
  const ui = [
    { id: "1", role: "user", parts: [{ type: "text", text: "q1 " + filler(3000) }] },
    { id: "2", role: "assistant", parts: [{ type: "text", text: "a1 " + filler(3000) }] },
    { id: "3", role: "user", parts: [{ type: "text", text: "what's the weather" }] },
    { id: "4", role: "assistant", parts: [{ type: "tool-weather", toolCallId: "c1", state: "output-available", input: { city: "x" }, output: "sunny" }, { type: "text", text: "It is sunny." }] },
  ];
  const u = compactSync(ui, { mode: "deterministic", pin: [3] });
  assert.equal(u.messages[0], ui[3]);
  assert.ok(isAdded(u.messages[1]));
});

test("merged parts a new marker supersedes: an earlier summary stays, a pinned message keeps its own text, a kept summary joins as a part of its own", async () => {
  // An earlier summary merged in after a marker stays through the next recency round.
  const big = (t) => t + " " + filler(3000);
  const base = { system: "sys", max_tokens: 100, messages: [{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }, { role: "user", content: "q1" }, { role: "assistant", content: big("a1") }, { role: "user", content: big("old") }, { role: "assistant", content: big("old answer") }, { role: "user", content: "q2" }] };
  const d = compactSync(base, { mode: "deterministic", pin: [0, 1, 2, 3] });
  const b = compactSync({ ...d.request, messages: [...d.request.messages, { role: "assistant", content: "a2" }, { role: "user", content: "q3" }, { role: "assistant", content: "a3" }, { role: "user", content: "q4" }] }, { mode: "recency_preserving", contextWindow: 4000, protectTailMin: 5 });
  const c = compactSync({ ...b.request, messages: [...b.request.messages, { role: "assistant", content: big("a4") }, { role: "user", content: big("q5") }, { role: "assistant", content: big("a5") }, { role: "user", content: "q6" }] }, { mode: "recency_preserving", contextWindow: 4000, protectTailMin: 1 });
  assert.equal(count(c.request.messages, "[Conversation Summary]"), 1, "the earlier summary is still there");
  assert.equal(count(c.request.messages, "[Conversation Compacted]"), 1);

  // A pinned message that holds a merged marker keeps the caller's text.
  const turn = (r, ask) => [{ role: "assistant", content: `a${r} ` + filler(6000) }, { role: "user", content: "x " + filler(6000) }, { role: "assistant", content: "b " + filler(6000) }, { role: "user", content: ask }];
  const o = { mode: "recency_preserving", contextWindow: 6000, protectTailMin: 1, protectHead: 2 };
  const r1 = compactSync({ system: "sys", max_tokens: 100, messages: [{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }, ...turn(1, "IMPORTANT: never touch prod")] }, o);
  const r2 = compactSync({ ...r1.request, messages: [...r1.request.messages, ...turn(2, "next")] }, { ...o, pin: (m) => JSON.stringify(m).includes("IMPORTANT") });
  assert.ok(r2.request.messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.text === "IMPORTANT: never touch prod")));
  assert.deepEqual(violations(r2.request, { provider: "anthropic" }), []);

  // A kept summary the merge brings next to a kept user message stays a part of its own: found next time.
  const small = { ...base, messages: base.messages.map((m, i) => (i === 3 ? { ...m, content: "a1" } : m)) };
  const kept = compactSync(small, { mode: "deterministic", pin: [0, 1, 2, 3] });
  const e = compactSync({ ...kept.request, messages: [...d.request.messages, ...turn(1, "r1")] }, { mode: "recency_preserving", contextWindow: 6000, protectTailMin: 1, protectHead: 3 });
  let previous;
  const s = await compact({ ...e.request, messages: [...e.request.messages, ...turn(2, "r2")] }, { mode: "structured", contextWindow: 6000, protectTailMin: 1, protectHead: 3, summarize: (q) => ((previous = q.previousSummary), summarize()) });
  assert.ok(previous, "the earlier summary is passed on");
  assert.equal(count(s.request.messages, "[Conversation Summary]"), 1);
});

test("an options getter that throws is INVALID_CONFIG in compact too", async () => {
  await assert.rejects(compact([{ role: "user", content: "hi" }], { get mode() { throw new Error("boom"); } }), (e) => e.code === "INVALID_CONFIG" && /boom/.test(e.message));
});

test("a person's request merged in after a marker is still the person's: pinned by role, counted as a request", () => {
  const turn = (r, ask) => [{ role: "assistant", content: `a${r} ` + filler(6000) }, { role: "user", content: "x " + filler(6000) }, { role: "assistant", content: "b " + filler(6000) }, { role: "user", content: ask }];
  const o = { mode: "recency_preserving", contextWindow: 6000, protectTailMin: 1, protectHead: 2 };
  const r1 = compactSync({ system: "s", max_tokens: 9, messages: [{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }, { role: "user", content: "q1 " + filler(6000) }, ...turn(1, "KEEP ME: the standing request")] }, o);
  const merged = r1.request.messages[2].content.map((p) => p.text);
  assert.ok(merged[0].startsWith("[Conversation Compacted]") && merged[1] === "KEEP ME: the standing request", JSON.stringify(merged));
  const r2 = compactSync({ ...r1.request, messages: [...r1.request.messages, ...turn(2, "next")] }, { ...o, pinRoles: ["user"] });
  assert.ok(JSON.stringify(r2.request.messages).includes("KEEP ME"), "pinned by its role");
});

test("an earlier summary merged into a message that is summarized goes to the summarizer once, as previousSummary", async () => {
  const turn = (r) => [{ role: "assistant", content: `a${r} ` + filler(6000) }, { role: "user", content: "x " + filler(6000) }, { role: "assistant", content: "b " + filler(6000) }, { role: "user", content: `r${r}` }];
  const start = { system: "sys", messages: [{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }, { role: "user", content: "q1" }, ...turn(1)] };
  const first = await compact(start, { mode: "structured", contextWindow: 6000, protectTailMin: 1, summarize });
  assert.ok(JSON.stringify(first.request.messages[2]).includes("[Conversation Summary]"), "merged into the head's message");
  let asked;
  // With a head of two, that message is now in the middle: summarized, its summary part sent apart.
  await compact({ ...first.request, messages: [...first.request.messages, ...turn(2)] }, { mode: "structured", contextWindow: 16000, protectTailMin: 1, protectHead: 2, summarize: (q) => ((asked = q), summarize()) });
  assert.ok(asked.previousSummary.includes("## Goal"));
  const sent = JSON.stringify(asked.messages);
  assert.ok(sent.includes('"q1"') && !sent.includes("[Conversation Summary]"), sent.slice(0, 300));
});

test("a pinned assistant turn in a whole-history mode: the newest request stays after it, so the request ends on a user turn (Gemini, Anthropic)", async () => {
  const turns = [["user", "Let's plan the trip to Kyoto. " + filler(2000)], ["assistant", "Decision: we fly on May 3 and stay at Hotel A."], ["user", "Great. Now book restaurants."], ["assistant", "Booked two restaurants. " + filler(2000)], ["user", "What about day 2?"]];
  const gemini = { model: "gemini-2.5-flash", contents: turns.map(([r, t]) => ({ role: r === "assistant" ? "model" : "user", parts: [{ text: t }] })) };
  const anthropic = { model: "claude-sonnet-4-5", max_tokens: 1024, messages: turns.map(([role, text]) => ({ role, content: [{ type: "text", text }] })) };
  for (const [request, key, format] of [[gemini, "contents", "gemini"], [anthropic, "messages", "anthropic"]]) {
    for (const mode of ["deterministic", "llm_replace"]) {
      const o = { mode, pin: [1], format };
      const r = mode === "deterministic" ? compactSync(request, o) : await compact(request, { ...o, summarize });
      const out = r.request[key];
      assert.equal(out.length, 3, `${format} ${mode}: summary, pin, newest request`);
      assert.ok(isAdded(out[0]));
      assert.equal(out[1], request[key][1], `${format} ${mode}: the pin verbatim`);
      assert.equal(out[2], request[key][4], `${format} ${mode}: the newest request verbatim, last`);
      assert.deepEqual(violations(r.request), [], `${format} ${mode}`);
    }
  }
});

test("the kept request never piles summaries up, and a running call after a pinned assistant still follows a user turn", async () => {
  const words = (n) => filler(n * 5);
  const turns = [["user", "Plan the trip to Kyoto. " + words(800)], ["assistant", "Decision: we fly on May 3."], ["user", "Great. Now book restaurants. " + words(800)], ["assistant", "Booked two. " + words(800)], ["user", "What about day 2?"]];
  let request = { model: "claude-sonnet-4-5", max_tokens: 1024, messages: turns.map(([role, content]) => ({ role, content })) };
  for (const pin of [[0, 1], [1]]) {
    for (let round = 1; round <= 3; round++) {
      const r = compactSync(request, { pin, format: "anthropic" });
      assert.equal(count(r.request.messages, "[Conversation Summary]"), 1, `pin ${pin}, round ${round}`);
      assert.deepEqual(violations(r.request), [], `pin ${pin}, round ${round}`);
      request = { ...request, messages: [...r.request.messages, { role: "assistant", content: `Day ${round + 1}: temples. ` + words(800) }, { role: "user", content: "and then?" }] };
    }
  }
  // Gemini: a pinned model turn, then the request and its call still running.
  const U = (t) => ({ role: "user", parts: [{ text: t }] });
  const M = (t) => ({ role: "model", parts: [{ text: t }] });
  const gemini = [U("q0 " + words(800)), M("Decision X"), U("look it up"), { role: "model", parts: [{ functionCall: { name: "search", args: { q: "x" } } }] }];
  for (const mode of ["deterministic", "llm_replace"]) {
    const r = mode === "deterministic" ? compactSync(gemini, { mode, pin: [1] }) : await compact(gemini, { mode, summarize, pin: [1] });
    assert.deepEqual(r.messages.slice(1), gemini.slice(1), `${mode}: the pin, the request, the running call`);
    const answered = [...r.messages, { role: "user", parts: [{ functionResponse: { name: "search", response: { result: "found" } } }] }];
    assert.deepEqual(violations(answered), [], mode);
  }
});

test("Gemini whole-history modes: a request stays before each pinned call turn that would follow a model turn, and a request merged with an earlier marker is kept without it", async () => {
  const big = (s) => s + " " + filler(250);
  const U = (t) => ({ role: "user", parts: [{ text: big(t) }] });
  const M = (t) => ({ role: "model", parts: [{ text: big(t) }] });
  const call = { role: "model", parts: [{ text: big("call") }, { functionCall: { id: "c1", name: "read", args: { p: "a" } } }] };
  const answer = { role: "user", parts: [{ functionResponse: { id: "c1", name: "read", response: { out: big("out") } } }] };
  const contents = [U("u0"), M("a1"), U("u2"), call, answer, M("a5"), U("u6")];
  for (const mode of ["deterministic", "llm_replace"]) {
    const o = { mode, contextWindow: 1000, pin: [1, 3] };
    const r = mode === "deterministic" ? compactSync({ contents }, o) : await compact({ contents }, { ...o, summarize });
    assert.deepEqual(r.request.contents.slice(1, 5), [contents[1], contents[2], call, answer], mode);
    assert.deepEqual(violations(r.request), [], mode);
  }
  // The newest request merged with an earlier marker: kept, the marker left out.
  const marker = "[Conversation Compacted]\n\n3 earlier messages were elided to save context space (1 user, 1 assistant, 1 tool). Recent messages are preserved verbatim below.";
  const merged = { role: "user", parts: [{ text: big("q4 what next?") }, { text: marker }] };
  const history = { contents: [U("u0"), M("a1"), merged] };
  assert.deepEqual(violations(history), []);
  for (const mode of ["deterministic", "llm_replace"]) {
    const o = { mode, pin: [1] };
    const r = mode === "deterministic" ? compactSync(history, o) : await compact(history, { ...o, summarize });
    const out = r.request.contents;
    assert.equal(out.length, 3, mode);
    assert.equal(out[1], history.contents[1]);
    assert.deepEqual(out[2].parts, [merged.parts[0]], `${mode}: the request without the old marker`);
    assert.equal(count(out, "[Conversation Compacted]"), 0);
    assert.deepEqual(violations(r.request), [], mode);
  }
});

test("Gemini whole-history modes: where only an earlier marker stands between a pinned model turn and a pinned call turn, the marker stays there", async () => {
  const U = (t) => ({ role: "user", parts: [{ text: t }] });
  const M = (t) => ({ role: "model", parts: [{ text: t }] });
  const call = { role: "model", parts: [{ text: "PIN reading" }, { functionCall: { name: "read", args: { path: "x" } } }] };
  const answer = { role: "user", parts: [{ functionResponse: { name: "read", response: { result: "XX" } } }] };
  const history = [U("start"), M("ok PIN"), U("q1 " + filler(3000)), M("a1 " + filler(3000)), U("q2"), call, answer, M("after " + filler(3000)), U("q3 " + filler(3000)), M("a3 " + filler(3000)), U("latest"), M("done")];
  const pin = (m) => JSON.stringify(m).includes("PIN");
  // A recency compaction leaves its marker between the two pins.
  const first = compactSync(history, { mode: "recency_preserving", contextWindow: 4000, protectHead: 2, protectTailMin: 2, pin });
  const at = first.messages.indexOf(call);
  assert.ok(isAdded(first.messages[at - 1]) && first.messages[at - 2].role === "model", roles(first.messages));
  const next = [...first.messages, U("new question")];
  for (const mode of ["deterministic", "llm_replace"]) {
    const r = mode === "deterministic" ? compactSync(next, { mode, pin }) : await compact(next, { mode, pin, summarize });
    const i = r.messages.indexOf(call);
    assert.equal(r.messages[i - 1], first.messages[at - 1], `${mode}: the earlier marker stays before the call turn`);
    assert.deepEqual(violations(r.messages), [], `${mode}: ${roles(r.messages)}`);
    assert.equal(count(r.messages, "[Conversation Summary]"), 1, mode);
  }
});

test("a pin that matches an earlier summary or marker (by index or by a function) does not keep it: summaries never pile up", async () => {
  const turns = (from, n) => Array.from({ length: n }, (_, i) => ({ role: (from + i) % 2 ? "assistant" : "user", content: `turn ${from + i} ` + filler(1200) }));
  for (const mode of ["deterministic", "llm_replace", "structured", "recency_preserving"]) {
    for (const pin of [(m) => m.role === "user", [0]]) {
      let h = turns(0, 12);
      for (let round = 1; round <= 3; round++) {
        const o = { mode, contextWindow: 4000, protectHead: 1, protectTailMin: 2, pin, summarize };
        const r = mode === "deterministic" || mode === "recency_preserving" ? compactSync(h, o) : await compact(h, o);
        const label = `${mode}, pin ${typeof pin === "function" ? "by role" : "[0]"}, round ${round}`;
        assert.ok(count(r.messages, "[Conversation Summary]") <= 1, `${label}: ${count(r.messages, "[Conversation Summary]")} summaries`);
        assert.ok(count(r.messages, "[Conversation Compacted]") <= 1, `${label}: ${count(r.messages, "[Conversation Compacted]")} markers`);
        assert.deepEqual(violations(r.messages), [], label);
        h = [...r.messages, ...turns(100 * round, 8)];
      }
    }
  }
});
