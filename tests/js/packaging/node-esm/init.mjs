// Node, manual initialisation through `chat-compaction/init` with the .wasm found by its
// package path (`chat-compaction/chat_compaction_bg.wasm`): `node init.mjs sync|async`.
import { readFileSync } from "node:fs";
import * as api from "chat-compaction/init";
import { runChecks } from "./checks.mjs";

const how = process.argv[2];
const wasmUrl = new URL(import.meta.resolve("chat-compaction/chat_compaction_bg.wasm"));
const bytes = readFileSync(wasmUrl);
if (how === "sync") api.initializeSync(bytes);
else if (how === "async") await api.initialize(await WebAssembly.compile(bytes));
else throw new Error("usage: node init.mjs sync|async");
const sample = JSON.parse(readFileSync(new URL("./sample.json", import.meta.url), "utf8"));
const summary = await runChecks(api, sample);
console.log(`PACKAGING-OK ${JSON.stringify({ init: how, ...summary })}`);
