// Cloudflare Workers (workerd) entry: a .wasm import is a compiled WebAssembly.Module.
import wasm from "./chat_compaction_bg.wasm";
import { initSync } from "./chat_compaction.js";

initSync({ module: wasm });

export * from "./api.js";
