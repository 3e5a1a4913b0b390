// Synthetic coding-agent sessions for the proxy's benchmark and tests: a system
// prompt, a task, then rounds of "read a file" tool calls with ~15-line results, a
// short assistant note and the user's next instruction. Deterministic; about 550
// estimated tokens a round, so `rounds(200_000)` rounds make a ~200K-token request.

/** Estimated tokens one round adds (o200k estimator; measured, rounded down). */
export const TOKENS_PER_ROUND = 540;

/** Rounds for about `tokens` tokens. */
export const rounds = (tokens) => Math.ceil(tokens / TOKENS_PER_ROUND);

const SYSTEM = "You are a careful coding agent. Read files before editing them and explain each change briefly.";
const TASK = "The integration tests in tests/sync.rs fail after the storage refactor. Find out why and fix it.";

function fileBody(i) {
  const lines = [`// src/module_${i}.rs`, `use crate::storage::{Store, Key};`, ""];
  for (let l = 0; l < 12; l++) {
    lines.push(`    let value_${l} = store.get(&Key::new("item-${i}-${l}")).map_err(|e| Error::storage(e, ${l}))?; // check ${(i * 31 + l) % 97}`);
  }
  return lines.join("\n");
}

/** The messages of a session of `n` rounds, in OpenAI Chat Completions or Anthropic Messages shape. */
export function messages(format, n) {
  const out = format === "openai" ? [{ role: "system", content: SYSTEM }] : [];
  out.push({ role: "user", content: TASK });
  for (let i = 0; i < n; i++) {
    const path = `src/module_${i}.rs`;
    if (format === "openai") {
      out.push({ role: "assistant", content: null, tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path }) } }] });
      out.push({ role: "tool", tool_call_id: `call_${i}`, content: fileBody(i) });
    } else {
      out.push({ role: "assistant", content: [{ type: "text", text: `Reading ${path}.` }, { type: "tool_use", id: `toolu_${i}`, name: "read_file", input: { path } }] });
      out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: fileBody(i) }] });
    }
    out.push({ role: "assistant", content: `${path} reads the store with the old key format; the refactor changed it in ${i % 7} places.` });
    out.push({ role: "user", content: `Good. Check the next module (${i + 1}).` });
  }
  return out;
}

export const TOOLS = {
  openai: [{ type: "function", function: { name: "read_file", description: "Read a file of the repository.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } } }],
  anthropic: [{ name: "read_file", description: "Read a file of the repository.", input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
};

/** A request body of about `tokens` tokens: OpenAI `{model, messages, tools, max_tokens}` or Anthropic `{model, system, messages, tools, max_tokens}`. */
export function request(format, tokens, fields = {}) {
  const n = rounds(tokens);
  if (format === "openai") return { model: "gpt-4o", max_tokens: 4096, tools: TOOLS.openai, messages: messages("openai", n), ...fields };
  return { model: "claude-sonnet-4-5", max_tokens: 8192, system: SYSTEM, tools: TOOLS.anthropic, messages: messages("anthropic", n), ...fields };
}
