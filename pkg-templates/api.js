// The package's JS API over the raw wasm exports. Every runtime entry file
// initialises the wasm module, then re-exports this.
//
// Histories cross into wasm as a value tape (src/tape.rs documents it): one walk
// over the caller's objects writes the structure into a Uint32Array and every
// string, UTF-8, into one byte buffer — no JSON.stringify, no per-character
// copying. wasm answers with a plan; messages it kept verbatim come back as input
// indices and are returned as the caller's own objects (never mutated, never copied).
import * as raw from "./chat_compaction.js";

/** An error from chat-compaction; `code` is stable (INVALID_INPUT, TOO_SMALL_TO_COMPACT, …). */
export class CompactionError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = "CompactionError";
    this.code = code;
  }
}

const MAX_DEPTH = 128;
const encoder = new TextEncoder();

// Scratch buffers, reused across calls and grown on demand.
let words = new Uint32Array(1 << 14);
let numbers = new Float64Array(256);
let bytes = new Uint8Array(1 << 16);
let nWords = 0;
let nNumbers = 0;
let nBytes = 0;
// Byte ranges of short strings (keys, roles, types) already in `bytes` this call.
const shortStrings = new Map();

function grow(array, need) {
  let size = array.length * 2;
  while (size < need) size *= 2;
  const bigger = new array.constructor(size);
  bigger.set(array);
  return bigger;
}

function word(w) {
  if (nWords === words.length) words = grow(words, nWords + 1);
  words[nWords++] = w;
}

function string(s) {
  if (s.length <= 24) {
    const known = shortStrings.get(s);
    if (known !== undefined) {
      word(known[0]);
      word(known[1]);
      return;
    }
  }
  const most = s.length * 3;
  if (nBytes + most > bytes.length) bytes = grow(bytes, nBytes + most);
  const { written } = encoder.encodeInto(s, bytes.subarray(nBytes));
  if (s.length <= 24) shortStrings.set(s, [nBytes, written]);
  word(nBytes);
  word(written);
  nBytes += written;
}

function invalid(message) {
  return new CompactionError("INVALID_INPUT", message);
}

/** Writes `v` as JSON.stringify would see it (toJSON honoured, undefined and functions skipped). */
function value(v, depth, path) {
  switch (typeof v) {
    case "string":
      word(4);
      string(v);
      return;
    case "number":
      if (!Number.isFinite(v)) {
        word(0);
        return;
      }
      word(3);
      if (nNumbers === numbers.length) numbers = grow(numbers, nNumbers + 1);
      word(nNumbers);
      numbers[nNumbers++] = v;
      return;
    case "boolean":
      word(v ? 2 : 1);
      return;
    case "bigint":
      throw invalid(`${path}: a BigInt cannot be part of a chat message (convert it to a number or a string)`);
    case "object": {
      if (v === null) {
        word(0);
        return;
      }
      if (depth >= MAX_DEPTH) throw invalid(`${path}: nested deeper than ${MAX_DEPTH} levels; flatten the data or check for a cycle`);
      if (typeof v.toJSON === "function") {
        value(v.toJSON(), depth + 1, path);
        return;
      }
      if (Array.isArray(v)) {
        word(5);
        word(v.length);
        const endAt = nWords;
        word(0);
        // Name the message in errors (`messages[3]: …`); deeper levels keep that name.
        const named = depth === 0 || (depth === 1 && path === "messages");
        for (let i = 0; i < v.length; i++) {
          const item = v[i];
          if (item === undefined || typeof item === "function" || typeof item === "symbol") word(0);
          else value(item, depth + 1, named ? `messages[${i}]` : path);
        }
        words[endAt] = nWords;
        return;
      }
      word(6);
      const countAt = nWords;
      word(0);
      word(0);
      let count = 0;
      for (const key of Object.keys(v)) {
        const item = v[key];
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
        string(key);
        value(item, depth + 1, depth === 0 && key === "messages" ? "messages" : path);
        count++;
      }
      words[countAt] = count;
      words[countAt + 1] = nWords;
      return;
    }
    default:
      word(0);
  }
}

/** Lets go of scratch buffers a very large history grew, so they are not held forever. */
function release() {
  if (bytes.length > 1 << 24) bytes = new Uint8Array(1 << 16);
  if (words.length > 1 << 22) words = new Uint32Array(1 << 14);
  if (numbers.length > 1 << 20) numbers = new Float64Array(256);
}

/** Encodes `input` into the scratch buffers; returns the three views to pass to wasm. */
function tape(input, what) {
  if (input === undefined) {
    throw invalid(`${what}: expected an array of messages or a request object with a "messages" array, got undefined`);
  }
  nWords = 0;
  nNumbers = 0;
  nBytes = 0;
  shortStrings.clear();
  value(input, 0, what);
  return [words.subarray(0, nWords), numbers.subarray(0, nNumbers), bytes.subarray(0, nBytes)];
}

function unwrap(envelope) {
  const parsed = JSON.parse(envelope);
  if (parsed.error) throw new CompactionError(parsed.error.code, parsed.error.message);
  return parsed.ok;
}

// Keys the JS layer handles itself; everything else goes to wasm for validation.
const JS_ONLY = new Set(["summarize", "signal", "countTokens", "count_tokens"]);

function optionsJson(options) {
  if (options === undefined || options === null) return "";
  if (typeof options !== "object" || Array.isArray(options)) {
    const got = Array.isArray(options) ? "an array" : typeof options;
    throw new CompactionError("INVALID_CONFIG", `options: expected an object, got ${got}`);
  }
  for (const [key, v] of Object.entries(options)) {
    if (typeof v === "number" && !Number.isFinite(v)) {
      throw new CompactionError("INVALID_CONFIG", `${key}: expected a finite number, got ${v}`);
    }
  }
  if (options.randomIds === true || options.random_ids === true) {
    // wasm has no entropy of its own: hand it a 53-bit seed.
    const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
    options = { ...options, randomSeed: (hi & 0x1fffff) * 2 ** 32 + lo };
  }
  try {
    return JSON.stringify(options, (key, v) => (key !== "" && JS_ONLY.has(key) ? undefined : v));
  } catch (cause) {
    throw new CompactionError("INVALID_CONFIG", `options: cannot be read (${cause.message})`, { cause });
  }
}

/**
 * The caller's `countTokens`, wrapped so that wasm never sees a throw: a failure
 * answers -1 (wasm then falls back to its estimator) and `check()` rethrows it as
 * a CompactionError with the caller's error as `cause`.
 */
function counter(options) {
  const fn = options?.countTokens ?? options?.count_tokens;
  if (fn === undefined || fn === null) return [undefined, () => {}];
  if (typeof fn !== "function") {
    throw new CompactionError("INVALID_CONFIG", `countTokens: expected a function (text) => number, got ${typeof fn}`);
  }
  let failure;
  const count = (text) => {
    if (failure !== undefined) return -1;
    try {
      const n = fn(text);
      if (typeof n === "number" && Number.isFinite(n) && n >= 0) return n;
      failure = new TypeError(`countTokens returned ${String(n)}; expected a non-negative number`);
    } catch (e) {
      failure = e;
    }
    return -1;
  };
  const check = () => {
    if (failure !== undefined) {
      throw new CompactionError("INVALID_CONFIG", `countTokens failed: ${failure?.message ?? String(failure)}`, { cause: failure });
    }
  };
  return [count, check];
}

/** Calls a wasm export with the encoded history, the options and the caller's counter. */
function call(exportFn, history, options, ...rest) {
  const opts = optionsJson(options);
  const [count, check] = counter(options);
  const [w, n, b] = tape(history, "input");
  let envelope;
  try {
    envelope = exportFn(w, n, b, opts, ...rest, count);
  } finally {
    release();
  }
  check();
  return unwrap(envelope);
}

function isRequest(history) {
  return history !== null && typeof history === "object" && !Array.isArray(history);
}

/**
 * Compacts a history synchronously with an offline mode (`deterministic`, `recency_preserving`).
 * Returns `{ messages, request?, notice, summary?, warnings }`. Kept messages are the
 * caller's own objects; `history` is never mutated.
 */
export function compactSync(history, options) {
  const { plan, notice, summary, warnings } = call(raw.compactTape, history, options);
  const source = isRequest(history) ? history.messages : history;
  const messages = plan.map((p) => (typeof p === "number" ? source[p] : p));
  const result = { messages, notice, warnings };
  if (summary !== undefined) result.summary = summary;
  if (isRequest(history)) result.request = { ...history, messages };
  return result;
}

/** Like `compactSync`, as a promise (the LLM modes will need it). */
export async function compact(history, options) {
  return compactSync(history, options);
}

/**
 * For callers that hold the history as JSON text and want JSON text back: the
 * result (`{messages, request?, notice, summary?, warnings}`) as JSON text. Parsing in JS and compacting the objects is the fastest
 * path measured, so that is what this does.
 */
export function compactJsonString(json, options) {
  if (typeof json !== "string") {
    throw invalid(`input: expected JSON text, got ${json === null ? "null" : typeof json}`);
  }
  let history;
  try {
    history = JSON.parse(json);
  } catch (cause) {
    throw new CompactionError("INVALID_INPUT", `input is not valid JSON: ${cause.message}`, { cause });
  }
  return JSON.stringify(compactSync(history, options));
}

/** Estimated tokens of a text, or of a whole history (array or request object). */
export function estimateTokens(input, options) {
  return call(raw.estimateTokensTape, input, options);
}

/** Whether the next request (history + `pendingText`) reaches the auto-compact threshold. */
export function shouldCompact(history, options, pendingText = "") {
  return call(raw.shouldCompactTape, history, options, String(pendingText ?? "")).shouldCompact;
}

/** Effective options and warnings from TOML (`[chat.compaction]` of a moltis.toml, or a bare table). */
export function parseConfig(toml) {
  if (typeof toml !== "string") {
    throw new CompactionError("INVALID_CONFIG", `config: expected TOML text, got ${toml === null ? "null" : typeof toml}`);
  }
  return unwrap(raw.parseConfigToml(toml));
}
