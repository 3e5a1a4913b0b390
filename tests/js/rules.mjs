// Provider rules of SPEC §2 checked on an output history: the JS twin of
// tests/common/rules.rs, rule for rule; tests/fixtures/rules.json holds cases both
// checkers must judge alike. Calls of the last group may lack results: the history
// ended while those tools ran (the caller appends their results).
const blocks = (m, type) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === type) : []);
const ids = (list, key) => list.map((b) => b[key]).filter((id) => typeof id === "string");
const isTool = (m) => m.role === "tool" || m.role === "tool_result";
const subset = (a, b) => [...a].every((x) => b.has(x));
const same = (a, b) => a.size === b.size && subset(a, b);

export function checkRules(format, messages) {
  messages.forEach((m, i) => {
    if (Array.isArray(m.content) && m.content.length === 0) throw new Error(`messages[${i}] has an empty content array`);
  });
  if (format === "anthropic") return checkAnthropic(messages);
  return checkOpenAI(messages.filter((m) => m.role !== "notice")); // Moltis notices are never sent
}

function checkOpenAI(messages) {
  for (let i = 0; i < messages.length; ) {
    const m = messages[i];
    if (isTool(m)) throw new Error(`messages[${i}] is a tool result without a call right before it`);
    const calls = new Set(ids(m.tool_calls ?? [], "id"));
    i++;
    if (calls.size === 0) continue;
    const answered = new Set();
    while (i < messages.length && isTool(messages[i])) {
      const id = messages[i].tool_call_id ?? "";
      if (!calls.has(id)) throw new Error(`messages[${i}] answers ${JSON.stringify(id)}, which the assistant before did not call`);
      if (answered.has(id)) throw new Error(`messages[${i}] answers ${JSON.stringify(id)} a second time`);
      answered.add(id);
      i++;
    }
    const stillRunning = i === messages.length;
    if (!same(answered, calls) && !stillRunning) throw new Error(`calls before messages[${i}] have no result`);
  }
}

function checkAnthropic(messages) {
  if (messages.length > 0 && messages[0].role !== "user") throw new Error("the first message is not a user message");
  messages.forEach((m, i) => {
    const results = ids(blocks(m, "tool_result"), "tool_use_id");
    const prevCalls = new Set(i > 0 ? ids(blocks(messages[i - 1], "tool_use"), "id") : []);
    const got = new Set(results);
    if (got.size !== results.length) throw new Error(`messages[${i}] answers a call twice`);
    if (!subset(got, prevCalls)) throw new Error(`messages[${i}] has tool_result blocks for calls not made right before it`);
    const calls = new Set(ids(blocks(m, "tool_use"), "id"));
    if (calls.size > 0) {
      const next = new Set(i + 1 < messages.length ? ids(blocks(messages[i + 1], "tool_result"), "tool_use_id") : []);
      const stillRunning = i + 2 >= messages.length && subset(next, calls);
      if (!same(next, calls) && !stillRunning) throw new Error(`tool_use blocks of messages[${i}] are not all answered in the next message`);
    }
    if (Array.isArray(m.content)) {
      const firstOther = m.content.findIndex((b) => b.type !== "tool_result");
      const lastResult = m.content.findLastIndex((b) => b.type === "tool_result");
      if (firstOther >= 0 && lastResult >= 0 && firstOther < lastResult) throw new Error(`messages[${i}] has content before its tool_result blocks`);
    }
  });
}
