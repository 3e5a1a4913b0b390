// Deno, no permissions granted: can a program import the package and compact?
// (The deno entry imports its .wasm as a module, so it needs no --allow-read.)
import { compactSync } from "chat-compaction";

const r = compactSync([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }], { mode: "deterministic" });
console.log(`PACKAGING-OK ${JSON.stringify({ messages: r.messages.length })}`);
