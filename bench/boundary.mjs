// Times the package's JS API in Node on a ~2 MB, 2,000-message agent history
// (objects in, objects out) and on the longest corpus session.
// Run after a build: `node bench/boundary.mjs`.
import { existsSync, readFileSync } from "node:fs";
import * as cc from "../pkg/node.js";

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

function median(runs, f) {
  f();
  const t = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    f();
    t.push(performance.now() - s);
  }
  t.sort((a, b) => a - b);
  return t[runs >> 1];
}

function report(name, history) {
  const text = JSON.stringify(history);
  console.log(`\n${name}: ${history.length ?? history.messages.length} messages, ${(text.length / 1e6).toFixed(2)} MB`);
  for (const mode of ["recency_preserving", "deterministic"]) {
    const options = { mode, contextWindow: 40000 };
    const objects = median(21, () => cc.compactSync(history, options));
    let line = `  ${mode.padEnd(19)} objects → objects: ${objects.toFixed(2).padStart(7)} ms`;
    if (cc.compactJsonString) {
      const strings = median(21, () => cc.compactJsonString(text, options));
      line += `   JSON string → JSON string: ${strings.toFixed(2).padStart(7)} ms`;
    }
    console.log(line);
  }
  console.log(`  ${"estimateTokens".padEnd(19)} objects: ${median(21, () => cc.estimateTokens(history)).toFixed(2).padStart(7)} ms`);
  console.log(`  ${"JSON.stringify".padEnd(19)} alone:   ${median(21, () => JSON.stringify(history)).toFixed(2).padStart(7)} ms (for scale)`);
}

report("synthetic agent history", syntheticAgentHistory(2000));
const longest = new URL("../../shared/corpus/swecontext-c1f62324.openai.json", import.meta.url);
if (existsSync(longest)) report("swecontext-c1f62324.openai.json", JSON.parse(readFileSync(longest, "utf8")));
for (const n of [200, 2000, 20000]) {
  const h = syntheticAgentHistory(n);
  const ms = median(9, () => cc.compactSync(h, { mode: "recency_preserving", contextWindow: 40000 }));
  console.log(`recency_preserving ${String(n).padStart(6)} messages: ${ms.toFixed(2).padStart(8)} ms (${((ms * 1000) / n).toFixed(2)} µs/message)`);
}
