// Manual initialisation, for hosts where the package cannot find its .wasm itself:
// `await initialize(urlOrResponseOrBytesOrModule)` or `initializeSync(bytesOrModule)`,
// then call the API as usual.
import init, { initSync } from "./chat_compaction.js";

/** Instantiates the module from a URL, a Response (or a promise of one), bytes, or a WebAssembly.Module. */
export async function initialize(source) {
  await init({ module_or_path: source });
}

/** Instantiates the module synchronously from bytes or a WebAssembly.Module. */
export function initializeSync(source) {
  initSync({ module: source });
}

export * from "./api.js";
