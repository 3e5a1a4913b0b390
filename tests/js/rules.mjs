// Provider rules of SPEC §2 checked on an output history (JS twin of tests/common/rules.rs).
// Calls of the last group may lack results: the history ended while those tools ran.
const blocks = (m, type) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === type) : []);
const isTool = (m) => m.role === "tool" || m.role === "tool_result";

export function checkRules(format, messages) {
  messages.forEach((m, i) => {
    if (Array.isArray(m.content) && m.content.length === 0) throw new Error(`messages[${i}] has empty content`);
  });
  if (format === "anthropic") {
    if (messages[0] && messages[0].role !== "user") throw new Error("first message is not user");
    messages.forEach((m, i) => {
      const calls = new Set(blocks(m, "tool_use").map((b) => b.id));
      const prev = i > 0 ? new Set(blocks(messages[i - 1], "tool_use").map((b) => b.id)) : new Set();
      for (const r of blocks(m, "tool_result")) {
        if (!prev.has(r.tool_use_id)) throw new Error(`messages[${i}]: tool_result ${r.tool_use_id} without its tool_use right before`);
      }
      if (calls.size && i + 2 < messages.length) {
        const next = new Set(blocks(messages[i + 1] ?? {}, "tool_result").map((b) => b.tool_use_id));
        for (const id of calls) if (!next.has(id)) throw new Error(`messages[${i}]: tool_use ${id} not answered in the next message`);
      }
    });
    return;
  }
  messages = messages.filter((m) => m.role !== "notice"); // Moltis notices are never sent
  for (let i = 0; i < messages.length; ) {
    const m = messages[i];
    if (isTool(m)) throw new Error(`messages[${i}]: tool result without its call right before`);
    const calls = new Set((m.tool_calls ?? []).map((c) => c.id));
    i++;
    const answered = new Set();
    while (i < messages.length && isTool(messages[i])) {
      const id = messages[i].tool_call_id;
      if (!calls.has(id) || answered.has(id)) throw new Error(`messages[${i}]: unexpected result ${id}`);
      answered.add(id);
      i++;
    }
    // the last group may still be running (its results are the caller's to append)
    if (answered.size !== calls.size && i < messages.length) throw new Error(`calls before messages[${i}] lack results`);
  }
}
