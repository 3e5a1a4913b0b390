// The package's JS API over the raw wasm exports: JSON in, JSON out, coded errors.
// Every runtime entry file initialises the wasm module, then re-exports this.
import * as raw from "./chat_compaction.js";

/** An error from chat-compaction; `code` is stable (INVALID_INPUT, TOO_SMALL_TO_COMPACT, …). */
export class CompactionError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = "CompactionError";
    this.code = code;
  }
}

function unwrap(envelope) {
  const parsed = JSON.parse(envelope);
  if (parsed.error) throw new CompactionError(parsed.error.code, parsed.error.message);
  return parsed.ok;
}

function optionsJson(options) {
  if (options === undefined || options === null) return "";
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new CompactionError("INVALID_CONFIG", `options: expected an object, got ${options === null ? "null" : Array.isArray(options) ? "an array" : typeof options}`);
  }
  return JSON.stringify(options);
}

function historyJson(history) {
  if (history === undefined) {
    throw new CompactionError("INVALID_INPUT", "input: expected an array of messages or a request object with a \"messages\" array, got undefined");
  }
  try {
    return JSON.stringify(history);
  } catch (cause) {
    throw new CompactionError("INVALID_INPUT", `input: cannot be serialized as JSON (${cause.message})`, { cause });
  }
}

/**
 * Compacts a history synchronously with an offline mode (`deterministic`, `recency_preserving`).
 * Returns `{ messages, request?, notice, summary?, warnings }`; never mutates `history`.
 */
export function compactSync(history, options) {
  const result = unwrap(raw.compactJson(historyJson(history), optionsJson(options)));
  if (history !== null && typeof history === "object" && !Array.isArray(history)) {
    result.request = { ...history, messages: result.messages };
  }
  return result;
}

/** Like `compactSync`, as a promise (the LLM modes will need it). */
export async function compact(history, options) {
  return compactSync(history, options);
}

/** Estimated tokens of a text, or of a whole history (array or request object). */
export function estimateTokens(input, options) {
  return unwrap(raw.estimateTokensJson(historyJson(input), optionsJson(options)));
}

/** Whether the next request (history + `pendingText`) reaches the auto-compact threshold. */
export function shouldCompact(history, options, pendingText = "") {
  return unwrap(raw.shouldCompactJson(historyJson(history), optionsJson(options), String(pendingText))).shouldCompact;
}

/** Effective options and warnings from TOML (`[chat.compaction]` of a moltis.toml, or a bare table). */
export function parseConfig(toml) {
  if (typeof toml !== "string") {
    throw new CompactionError("INVALID_CONFIG", `config: expected TOML text, got ${toml === null ? "null" : typeof toml}`);
  }
  return unwrap(raw.parseConfigToml(toml));
}
