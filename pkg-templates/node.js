// Node entry: load the .wasm next to this file synchronously, then expose the API.
import { readFileSync } from "node:fs";
import { initSync } from "./chat_compaction.js";

initSync({ module: readFileSync(new URL("./chat_compaction_bg.wasm", import.meta.url)) });

export * from "./api.js";
