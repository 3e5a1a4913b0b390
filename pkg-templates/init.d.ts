// The `chat-compaction/init` entry: the same API, without automatic initialisation.
export * from "./index.js";

/** Anything the module can be instantiated from. */
export type WasmSource = URL | string | Response | Promise<Response> | BufferSource | WebAssembly.Module;

/** Instantiates the module from a URL, a Response (or a promise of one), bytes, or a WebAssembly.Module. */
export declare function initialize(source: WasmSource): Promise<void>;

/** Instantiates the module synchronously from bytes or a WebAssembly.Module. */
export declare function initializeSync(source: BufferSource | WebAssembly.Module): void;
