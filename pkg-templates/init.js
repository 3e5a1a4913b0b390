// Manual initialisation, for hosts where the package cannot find its .wasm itself:
// `await initialize(urlOrResponseOrBytesOrModule)` or `initializeSync(bytesOrModule)`,
// then call the API as usual.
import init, { initSync } from "./chat_compaction.js";
import { CompactionError } from "./api.js";

// A source the module cannot come from: the runtime's error is the cause.
const failed = (cause) =>
  new CompactionError("NOT_INITIALIZED", "cannot instantiate chat_compaction_bg.wasm from this source (expected its URL, a Response, its bytes or a WebAssembly.Module; see the cause)", { cause });

/** Instantiates the module from a URL, a Response (or a promise of one), bytes, or a WebAssembly.Module. */
export async function initialize(source) {
  try {
    await init({ module_or_path: source });
  } catch (cause) {
    throw failed(cause);
  }
}

/** Instantiates the module synchronously from bytes or a WebAssembly.Module. */
export function initializeSync(source) {
  try {
    initSync({ module: source });
  } catch (cause) {
    throw failed(cause);
  }
}

export * from "./api.js";
