// Compacted AI SDK UIMessages still work with the real Vercel AI SDK (`ai`, a
// devDependency pinned in package.json): `convertToModelMessages` accepts them,
// and every tool-call of the model messages it makes is answered by a tool-result.
import { test } from "node:test";
import assert from "node:assert/strict";
import { convertToModelMessages } from "ai";
import { compactSync, validate } from "../../pkg/node.js";
import { uiMessages } from "./histories.mjs";

/** The ids of the tool-calls that no tool-result answers, in the model messages. */
function unanswered(modelMessages) {
  const calls = [];
  const results = new Set();
  for (const m of modelMessages) {
    if (!Array.isArray(m.content)) continue;
    for (const part of m.content) {
      if (part.type === "tool-call") calls.push(part.toolCallId);
      if (part.type === "tool-result") results.add(part.toolCallId);
    }
  }
  return { calls, missing: calls.filter((id) => !results.has(id)) };
}

/** A UIMessage history whose tool call of round `round` was interrupted (no output) in an older message. */
function interrupted(history, round) {
  return history.map((m) =>
    m.id === `a_${round}`
      ? { ...m, parts: m.parts.map((p) => (p.toolCallId ? { type: p.type, ...(p.toolName ? { toolName: p.toolName } : {}), toolCallId: p.toolCallId, state: "input-available", input: p.input } : p)) }
      : m,
  );
}

test("compacted UIMessages convert with the AI SDK's convertToModelMessages, every tool-call answered", async () => {
  const history = uiMessages(25);
  const before = await convertToModelMessages(history);
  assert.deepEqual(unanswered(before).missing, [], "the input converts with every call answered");
  for (const mode of ["recency_preserving", "deterministic"]) {
    const r = compactSync(history, { mode, contextWindow: 2000 });
    assert.equal(r.notice.format, "ai-sdk-ui");
    assert.ok(r.notice.messagesAfter < r.notice.messagesBefore, mode);
    const model = await convertToModelMessages(r.messages);
    assert.ok(model.length > 0, `${mode}: converted`);
    const { calls, missing } = unanswered(model);
    assert.deepEqual(missing, [], `${mode}: every tool-call answered by a tool-result`);
    if (mode === "recency_preserving") assert.ok(calls.length >= 3, `${mode}: the kept tool parts became ${calls.length} tool-calls`);
  }
});

test("a UIMessage history with an interrupted older call: compaction answers it, so the conversion has no dangling tool-call", async () => {
  const history = interrupted(uiMessages(25), 20);
  assert.deepEqual(validate(history).violations.map((v) => v.code), ["INCOMPLETE_TOOL_PART"]);
  assert.deepEqual(unanswered(await convertToModelMessages(history)).missing, ["tc_20"], "as it is, the AI SDK would send a call without its result");
  const r = compactSync(history, { mode: "recency_preserving", contextWindow: 2000 });
  assert.ok(r.messages.some((m) => m.parts.some((p) => p.toolCallId === "tc_20")), "the interrupted call is in the kept tail");
  assert.deepEqual(validate(r.messages).violations, []);
  const { calls, missing } = unanswered(await convertToModelMessages(r.messages));
  assert.ok(calls.includes("tc_20"));
  assert.deepEqual(missing, [], "every tool-call answered by a tool-result");
});

test("a UIMessage request object (useChat's body) compacts under messages and converts", async () => {
  const body = { id: "chat_1", trigger: "submit-message", messages: uiMessages(25) };
  const r = compactSync(body, { mode: "recency_preserving", contextWindow: 2000 });
  assert.equal(r.request.messages, r.messages);
  assert.equal(r.request.id, "chat_1");
  assert.deepEqual(unanswered(await convertToModelMessages(r.request.messages)).missing, []);
});
