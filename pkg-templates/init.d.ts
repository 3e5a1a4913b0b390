// The `chat-compaction/init` entry: the same API, without automatic initialisation.
export * from "./index.js";
import type { ResponseLike, URLLike } from "./index.js";

/** A compiled WebAssembly.Module (typed without requiring the DOM lib). */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : object;
/** The module's bytes. */
export type WasmBytes = ArrayBuffer | ArrayBufferView;
/** Anything the module can be instantiated from (URL and Response typed without requiring the DOM lib or @types/node). */
export type WasmSource = URLLike | string | ResponseLike | Promise<ResponseLike> | WasmBytes | WasmModule;

/** Instantiates the module from a URL, a Response (or a promise of one), bytes, or a WebAssembly.Module; a source it cannot be instantiated from rejects with NOT_INITIALIZED. */
export declare function initialize(source: WasmSource): Promise<void>;

/** Instantiates the module synchronously from bytes or a WebAssembly.Module; a source it cannot be instantiated from throws NOT_INITIALIZED. */
export declare function initializeSync(source: WasmBytes | WasmModule): void;
