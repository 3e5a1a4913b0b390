// Histories the benchmarks share.

/** A 2,000-message agent history: a tool call every other turn, 40-line tool outputs. */
export function syntheticAgentHistory(n) {
  const msgs = [{ role: "system", content: "You are a coding agent." }];
  for (let i = 0; msgs.length < n; i++) {
    msgs.push({ role: "user", content: `Step ${i}: please look at src/module_${i}.rs and fix the failing test, then tell me what is next.` });
    const id = `call_${i}`;
    msgs.push({ role: "assistant", content: "Let me read the file.", tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path: `src/module_${i}.rs` }) } }] });
    let out = "";
    for (let l = 0; l < 40; l++) out += `${String(l).padStart(4)}  fn helper_${l}(x: u32) -> u32 { x.wrapping_mul(${l}) + ${i} } // line ${l}\n`;
    msgs.push({ role: "tool", tool_call_id: id, content: out });
    msgs.push({ role: "assistant", content: `Fixed module ${i}: the helper overflowed. Next: run the tests again.` });
  }
  msgs.length = n;
  while (msgs.at(-1).role === "tool" || msgs.at(-1).tool_calls) msgs.pop();
  return msgs;
}
