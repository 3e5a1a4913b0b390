// The main job: compacts a real conversation with each offline mode through the
// built npm package (pkg/) and prints the notices and the token counts.
import { readFileSync } from "node:fs";
import { compactSync, measure, shouldCompact } from "../pkg/node.js";

const file = process.argv[2] ?? new URL("../examples/data/tau-bench-airline-3.json", import.meta.url);
const contextWindow = Number(process.argv[3] ?? 8000);
const history = JSON.parse(readFileSync(file, "utf8"));

const meter = measure(history, { contextWindow });
console.log(`history: ${meter.perMessage.length} messages, ~${meter.tokens} tokens (estimated, ${meter.options.tokenizer})`);
console.log(`context window: ${contextWindow} tokens; auto-compact would fire: ${shouldCompact(history, { contextWindow })}`);
for (const mode of ["deterministic", "recency_preserving"]) {
  const { messages, notice, warnings } = compactSync(history, { mode, contextWindow });
  console.log(`\n--- ${mode} ---`);
  console.log(notice.text);
  console.log(`messages: ${notice.messagesBefore} → ${messages.length}; tokens: ${notice.tokensBefore} → ${notice.tokensAfter}`);
  for (const w of warnings) console.log(`warning ${w.code}: ${w.message}`);
}
