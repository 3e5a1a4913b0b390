// LangChain.js messages through the package, as docs/guides.md shows it: to the
// OpenAI shape, compacted, and back with LangChain's own coercion.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, coerceMessageLikeToMessage } from "@langchain/core/messages";
import { compactSync, validate } from "../../pkg/node.js";

// docs/guides.md's conversion (section "LangChain.js").
const ROLES = { human: "user", ai: "assistant", system: "system", tool: "tool" };
const toOpenAI = (m) => ({
  role: ROLES[m.getType()],
  content: m.content,
  ...(m.tool_calls?.length ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } })) } : {}),
  ...(m.getType() === "tool" ? { tool_call_id: m.tool_call_id } : {}),
});
const fromOpenAI = (m) => coerceMessageLikeToMessage(m);

test("LangChain messages → OpenAI shape → compacted → LangChain messages, calls still answered", () => {
  const lc = [new SystemMessage("You are a coding agent.")];
  for (let i = 0; i < 25; i++) {
    lc.push(new HumanMessage(`step ${i}: look at src/mod_${i}.rs`));
    lc.push(new AIMessage({ content: "reading", tool_calls: [{ id: `call_${i}`, name: "read_file", args: { path: `src/mod_${i}.rs` } }] }));
    lc.push(new ToolMessage({ content: `fn f_${i}() {}\n`.repeat(60), tool_call_id: `call_${i}` }));
    lc.push(new AIMessage(`module ${i} is fine`));
  }
  lc.push(new HumanMessage("what is left?"));
  const openai = lc.map(toOpenAI);
  assert.deepEqual(validate(openai).violations, []);
  const { messages, notice } = compactSync(openai, { mode: "recency_preserving", contextWindow: 4000 });
  assert.ok(notice.tokensAfter < notice.tokensBefore && notice.fits);
  assert.deepEqual(validate(messages).violations, []);
  const back = messages.map(fromOpenAI);
  assert.equal(back[0].getType(), "system");
  assert.equal(back.at(-1).content, "what is left?");
  // Every tool message answers a call of the AI message before it, with the same id.
  const calls = new Set();
  for (const m of back) {
    if (m.getType() === "ai") for (const c of m.tool_calls ?? []) calls.add(c.id);
    if (m.getType() === "tool") assert.ok(calls.has(m.tool_call_id), m.tool_call_id);
  }
  // A kept message comes back as it went in.
  const kept = back.findLast((m) => m.getType() === "ai" && m.tool_calls?.length);
  const original = lc.find((m) => m.tool_calls?.[0]?.id === kept.tool_calls[0].id);
  assert.deepEqual(kept.tool_calls, original.tool_calls.map((c) => ({ ...c, type: "tool_call" })));
});
