// Node, ES module consumer: `import … from "chat-compaction"` must load the node entry.
import { readFileSync } from "node:fs";
import * as api from "chat-compaction";
import { runChecks } from "./checks.mjs";

const entry = import.meta.resolve("chat-compaction");
if (!entry.endsWith("/node_modules/chat-compaction/node.js")) throw new Error(`resolved ${entry}, expected the node entry`);
const sample = JSON.parse(readFileSync(new URL("./sample.json", import.meta.url), "utf8"));
const summary = await runChecks(api, sample);
console.log(`PACKAGING-OK ${JSON.stringify({ entry: entry.split("/").pop(), ...summary })}`);
