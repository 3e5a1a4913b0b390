// Times the package's JS API in Node on a ~2 MB, 2,000-message agent history
// (objects in, objects out) and on the longest corpus session, every call cold
// (`cache: false`): the cost of crossing the boundary. bench/speed.mjs has the
// incremental figures.
// Run after a build: `node bench/boundary.mjs`.
import { existsSync, readFileSync } from "node:fs";
import * as cc from "../pkg/node.js";
import { syntheticAgentHistory } from "./histories.mjs";

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
    const options = { mode, contextWindow: 40000, cache: false };
    const objects = median(21, () => cc.compactSync(history, options));
    let line = `  ${mode.padEnd(19)} objects → objects: ${objects.toFixed(2).padStart(7)} ms`;
    if (cc.compactJsonString) {
      const strings = median(21, () => cc.compactJsonString(text, options));
      line += `   JSON string → JSON string: ${strings.toFixed(2).padStart(7)} ms`;
    }
    console.log(line);
  }
  console.log(`  ${"estimateTokens".padEnd(19)} objects: ${median(21, () => cc.estimateTokens(history, { cache: false })).toFixed(2).padStart(7)} ms`);
  console.log(`  ${"JSON.stringify".padEnd(19)} alone:   ${median(21, () => JSON.stringify(history)).toFixed(2).padStart(7)} ms (for scale)`);
}

report("synthetic agent history", syntheticAgentHistory(2000));
const longest = new URL("../../shared/corpus/swecontext-c1f62324.openai.json", import.meta.url);
if (existsSync(longest)) report("swecontext-c1f62324.openai.json", JSON.parse(readFileSync(longest, "utf8")));
