// Deno entry: read the .wasm next to this file, then expose the API.
import { initSync } from "./chat_compaction.js";

initSync({ module: await Deno.readFile(new URL("./chat_compaction_bg.wasm", import.meta.url)) });

export * from "./api.js";
