// Bun: the bare import must resolve through the `bun` export condition.
import * as api from "chat-compaction";
import { runChecks } from "./checks.mjs";

const entry = import.meta.resolve("chat-compaction");
if (!entry.endsWith("/node_modules/chat-compaction/node.js")) throw new Error(`resolved ${entry}, expected the bun entry (node.js)`);
const sample = await Bun.file(new URL("./sample.json", import.meta.url)).json();
const summary = await runChecks(api, sample);
console.log(`PACKAGING-OK ${JSON.stringify({ entry: entry.split("/").pop(), ...summary })}`);
