// Deno entry: import the .wasm as a compiled module (a source-phase import, no
// read permission needed), then expose the API.
import source wasm from "./chat_compaction_bg.wasm";
import { initSync } from "./chat_compaction.js";

initSync({ module: wasm });

export * from "./api.js";
