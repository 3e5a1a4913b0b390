// Deno with the package installed in node_modules (package.json project): the bare
// import must resolve through the `deno` export condition.
import * as api from "chat-compaction";
import { runChecks } from "./checks.mjs";

const entry = import.meta.resolve("chat-compaction");
if (!entry.endsWith("/node_modules/chat-compaction/deno.js")) throw new Error(`resolved ${entry}, expected the deno entry`);
const sample = JSON.parse(await Deno.readTextFile(new URL("./sample.json", import.meta.url)));
const summary = await runChecks(api, sample);
console.log(`PACKAGING-OK ${JSON.stringify({ entry: entry.split("/").pop(), ...summary })}`);
