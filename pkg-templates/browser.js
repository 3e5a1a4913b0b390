// Browser and bundler entry: fetch and instantiate the .wasm next to this file
// (bundlers rewrite the URL to the emitted asset), then expose the API.
import init from "./chat_compaction.js";

await init({ module_or_path: new URL("./chat_compaction_bg.wasm", import.meta.url) });

export * from "./api.js";
