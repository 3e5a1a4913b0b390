// A Cloudflare Worker that compacts chat requests before forwarding them upstream.
//
//   POST /v1/chat/completions   OpenAI Chat Completions (and compatible gateways)
//   POST /v1/messages           Anthropic Messages
//
// For each request it meters the whole request (messages, system prompt, tool
// definitions, the room reserved for the answer, the model's window) and, over
// the auto-compact threshold, compacts its messages offline, in one call on the
// body's bytes (the package's `compactBody`: no JSON.parse). A request under the
// threshold is forwarded byte for byte; a compacted one keeps every other field
// and every kept message as the caller's bytes. Where recency_preserving cannot
// make it fit, deterministic is tried; a request that fits no window gets a 413
// that says by how much. The
// upstream response (streamed or not) is returned as it arrives, with one added
// header, `x-chat-compaction`. README.md beside this file describes all of it.
import { compactBody, compactSync, measure, measureBody } from "chat-compaction";

/** The response header that reports what the proxy did (README.md: "The header"). */
const NOTICE_HEADER = "x-chat-compaction";

const ENDPOINTS = {
  "/v1/chat/completions": { api: "openai", format: "openai" },
  "/v1/messages": { api: "anthropic", format: "anthropic" },
};

/** The modes a Worker can run: offline, synchronous, no summarizer. */
const OFFLINE_MODES = ["recency_preserving", "deterministic"];

/**
 * Request headers never forwarded: hop-by-hop ones (RFC 9110 §7.6.1), `host`,
 * `expect` and `content-length` (the runtime sets them for the new request), and
 * what Cloudflare's edge adds on its way in (`cf-*`, `x-real-ip`).
 */
const DROPPED_HEADERS = new Set(["host", "expect", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade", "te", "trailer", "x-real-ip"]);
const droppedHeader = (name) => DROPPED_HEADERS.has(name) || name.startsWith("proxy-") || name.startsWith("cf-");

const decoder = new TextDecoder("utf-8", { fatal: true });

export default {
  async fetch(request, env) {
    try {
      return await handle(request, env ?? {});
    } catch (e) {
      // Nothing above should throw; if something does, the caller still gets JSON,
      // in the shape of the API it called.
      const api = ENDPOINTS[new URL(request.url).pathname.replace(/\/+$/, "")]?.api ?? "openai";
      return error(api, 500, "internal_error", `the proxy failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  },
};

async function handle(request, env) {
  const url = new URL(request.url);
  const endpoint = ENDPOINTS[url.pathname.replace(/\/+$/, "")];
  if (endpoint === undefined) {
    return error("openai", 404, "not_found", `no such endpoint: ${url.pathname}; this proxy serves POST /v1/chat/completions (OpenAI) and POST /v1/messages (Anthropic)`);
  }
  const { api, format } = endpoint;
  if (request.method !== "POST") {
    return error(api, 405, "method_not_allowed", `${request.method} is not allowed on ${url.pathname}: send the request with POST`, {}, { allow: "POST" });
  }
  const config = settings(env, api);
  if (config.problem) return error(api, 500, "proxy_misconfigured", config.problem);

  // The body: JSON (a missing content-type is read as JSON too), UTF-8, an object with messages.
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "" && type !== "application/json" && !type.endsWith("+json")) {
    return error(api, 415, "unsupported_media_type", `the body must be JSON (content-type: application/json), got content-type: ${type}`);
  }
  const bytes = new Uint8Array(await request.arrayBuffer());
  const options = { ...config.options, format };

  // Decided and, when over the threshold, compacted from the bytes in one call:
  // no JSON.parse, and a request that fits is the caller's bytes untouched.
  // (deterministic first: decided here, compacted below with the newest request pinned)
  const measureOnly = config.modes[0] !== "recency_preserving";
  let decided;
  let failed;
  try {
    decided = measureOnly ? { meter: measureBody(bytes, options), compacted: false } : compactBody(bytes, { ...options, mode: config.modes[0] });
  } catch (e) {
    if (e?.code === "INVALID_INPUT" && /not valid JSON/.test(e.message)) {
      return error(api, 400, "invalid_json", `the body is not valid JSON: ${e.message.replace(/^input: not valid JSON: /, "")}`);
    }
    failed = e;
  }
  const shape = notAnObject(bytes);
  if (shape !== undefined) return shape(api);
  // Over the threshold, but the first mode cannot shrink it: the fallback below.
  if (failed !== undefined && failed?.code !== "TOO_SMALL_TO_COMPACT") return libraryError(api, failed);
  if (decided !== undefined && decided.meter.perMessage.length === 0) {
    return error(api, 400, "invalid_request", 'the body must have a non-empty "messages" array, got an empty array');
  }
  if (decided !== undefined && !decided.compacted && !(measureOnly && decided.meter.shouldCompact)) {
    // Under the threshold: forward the caller's bytes untouched.
    return forward(request, config, bytes, describe({ mode: "none", before: decided.meter }));
  }
  if (decided?.compacted && decided.notice.fits && decided.notice.tokensAfter < decided.notice.tokensBefore) {
    const after = { ...decided.meter, tokens: decided.notice.tokensAfter };
    if (overBy(after) <= 0) {
      return forward(request, config, decided.body, describe({ mode: decided.notice.mode, before: decided.meter, after, notice: decided.notice }));
    }
  }
  return fallback(request, config, api, bytes, options);
}

/**
 * Where the first mode could not make the request fit: each mode in turn on the
 * parsed request. recency_preserving keeps the newest messages verbatim; when it
 * cannot shrink the history (TOO_SMALL_TO_COMPACT) or its result stays over the
 * threshold, deterministic is tried with the newest request and the last
 * message pinned, so the question and the latest tool result reach the model as
 * sent. Only a result smaller than the request counts.
 */
function fallback(request, config, api, bytes, options) {
  const body = JSON.parse(decoder.decode(bytes));
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    const got = body.messages === undefined ? "none" : body.messages === null ? "null" : Array.isArray(body.messages) ? "an empty array" : typeof body.messages;
    return error(api, 400, "invalid_request", `the body must have a non-empty "messages" array, got ${got}`);
  }
  let before;
  try {
    before = measure(body, options);
  } catch (e) {
    return libraryError(api, e);
  }
  let best;
  for (const mode of config.modes) {
    const pin = mode === "deterministic" ? [...(Array.isArray(options.pin) ? options.pin : []), ...newest(body.messages)] : options.pin;
    let result;
    try {
      result = compactSync(body, { ...options, mode, ...(pin === undefined ? {} : { pin }) });
    } catch (e) {
      if (e?.code === "TOO_SMALL_TO_COMPACT") continue;
      return libraryError(api, e);
    }
    if (result.notice.tokensAfter >= result.notice.tokensBefore) continue;
    if (best === undefined || result.notice.tokensAfter < best.notice.tokensAfter) best = result;
    if (result.notice.fits) break;
  }

  if (best === undefined) {
    // Neither mode makes it smaller: forward as is if it fits the window at all.
    if (overBy(before) <= 0) return forward(request, config, bytes, describe({ mode: "none", before }));
    return tooLarge(config, before, null);
  }
  // (the compaction's own count of its result: no second measure)
  const after = { ...before, tokens: best.notice.tokensAfter };
  if (overBy(after) > 0) return tooLarge(config, before, best, after);
  return forward(request, config, JSON.stringify(best.request), describe({ mode: best.notice.mode, before, after, notice: best.notice }));
}

/**
 * A 400 for a body that is JSON but not an object (what its first byte says it
 * is), or undefined for an object.
 */
function notAnObject(bytes) {
  let i = 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  const c = String.fromCharCode(bytes[i] ?? 0x7b);
  if (c === "{") return undefined;
  const got = c === "[" ? "an array" : c === "n" ? "null" : c === '"' ? "a string" : c === "t" || c === "f" ? "a boolean" : "a number";
  return (api) => error(api, 400, "invalid_request", `the body must be a JSON object with a "messages" array, got ${got}`);
}

/**
 * The indices to keep verbatim in deterministic mode: the newest request of the
 * person (the last user message with more than tool results in it) and the last
 * message (with its tool call or result, which the library pins along). A
 * request that ends the history needs no pin: every mode keeps it, after the
 * summary.
 */
function newest(messages) {
  const last = messages.length - 1;
  for (let i = last; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    const ownWords = typeof m.content === "string" || (Array.isArray(m.content) && m.content.some((part) => part?.type !== "tool_result"));
    if (ownWords) return i === last ? [] : [i, last];
  }
  return [last];
}

/** The upstream URL and key, and the compaction options, from the Worker's environment. */
function settings(env, api) {
  const prefix = api === "openai" ? "OPENAI" : "ANTHROPIC";
  const base = text(env[`${prefix}_UPSTREAM_URL`]) ?? text(env.UPSTREAM_URL);
  const key = text(env[`${prefix}_UPSTREAM_KEY`]) ?? text(env.UPSTREAM_KEY);
  if (base === undefined) {
    return { problem: `no upstream: set UPSTREAM_URL (or ${prefix}_UPSTREAM_URL) in the Worker's environment, e.g. https://api.${api}.com` };
  }
  try {
    const parsed = new URL(base);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new Error(`not http(s): ${parsed.protocol}`);
  } catch (e) {
    return { problem: `UPSTREAM_URL is not an http(s) URL: ${JSON.stringify(base)} (${e.message})` };
  }
  let options = env.COMPACTION_OPTIONS ?? {};
  if (typeof options === "string") {
    try {
      options = options.trim() === "" ? {} : JSON.parse(options);
    } catch (e) {
      return { problem: `COMPACTION_OPTIONS is not JSON: ${e.message}` };
    }
  }
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    return { problem: "COMPACTION_OPTIONS must be a JSON object of compaction options, e.g. {\"contextWindow\": 32768}" };
  }
  const first = options.mode === undefined ? "recency_preserving" : String(options.mode).replace(/-/g, "_");
  if (!OFFLINE_MODES.includes(first)) {
    return { problem: `COMPACTION_OPTIONS.mode must be "recency_preserving" or "deterministic" (the proxy runs the offline modes), got ${JSON.stringify(options.mode)}` };
  }
  const { mode: _, ...rest } = options;
  const modes = first === "recency_preserving" ? ["recency_preserving", "deterministic"] : ["deterministic"];
  return { base: base.replace(/\/+$/, ""), key, api, options: rest, modes };
}

const text = (v) => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);

/** Forwards `body` upstream with the caller's headers; the response is passed through as it streams. */
async function forward(request, config, body, notice) {
  const url = new URL(request.url);
  const headers = new Headers();
  const named = new Set((request.headers.get("connection") ?? "").toLowerCase().split(",").map((s) => s.trim()));
  for (const [name, value] of request.headers) {
    if (!droppedHeader(name) && !named.has(name)) headers.append(name, value);
  }
  if (config.key !== undefined) {
    if (config.api === "openai") {
      headers.set("authorization", `Bearer ${config.key}`);
      headers.delete("x-api-key");
    } else {
      headers.set("x-api-key", config.key);
      headers.delete("authorization");
    }
  }
  let upstream;
  try {
    upstream = await fetch(config.base + url.pathname + url.search, { method: "POST", headers, body, redirect: "manual" });
  } catch (e) {
    return error(config.api, 502, "upstream_unreachable", `the upstream ${config.base} could not be reached: ${e instanceof Error ? e.message : String(e)}`, {}, { [NOTICE_HEADER]: notice });
  }
  // The same body stream, status and headers; the runtime sends chunks on as they come.
  const response = new Response(upstream.body, upstream);
  response.headers.set(NOTICE_HEADER, notice);
  return response;
}

/** Tokens over the window: the request's input tokens plus the room reserved for the answer, less the window. */
const overBy = (m) => m.tokens + m.reservedOutputTokens - m.contextWindow;

/**
 * The header value: `mode=<mode>; tokens=<before>-><after>; messages=<before>-><after>;
 * window=<window>; reserved=<reserved>` (no arrows when nothing was compacted).
 */
function describe({ mode, before, after, notice }) {
  const parts = [`mode=${mode}`];
  if (notice === undefined) {
    parts.push(`tokens=${before.tokens}`, `messages=${before.perMessage.length}`);
  } else {
    parts.push(`tokens=${before.tokens}->${after.tokens}`, `messages=${notice.messagesBefore}->${notice.messagesAfter}`);
  }
  parts.push(`window=${before.contextWindow}`, `reserved=${before.reservedOutputTokens}`);
  return parts.join("; ");
}

const number = (n) => n.toLocaleString("en-US");

/**
 * 413: even the best compaction leaves the request over the model's window. It
 * advises lowering max_tokens only when the request's own max_tokens reserved
 * the answer's room (not nothing, nor the proxy's reserveOutputTokens).
 */
function tooLarge(config, before, result, after = before) {
  const over = overBy(after);
  const reserved = after.reservedOutputTokens;
  const proxyReserved = config.options.reserveOutputTokens ?? config.options.reserve_output_tokens ?? 0;
  const byRequest = reserved > proxyReserved;
  const how =
    result === null
      ? "and compacting cannot make it smaller"
      : `even after compaction (${result.notice.mode}: ${number(before.tokens)} → ${number(after.tokens)} tokens)`;
  const needs =
    reserved === 0
      ? `${number(after.tokens)} input tokens`
      : `${number(after.tokens)} input tokens + ${number(reserved)} reserved for the answer${byRequest ? "" : " by the proxy"} = ${number(after.tokens + reserved)} tokens`;
  const message =
    `the request needs ${needs}, ${number(over)} more than the context window of ${number(after.contextWindow)}, ${how}; ` +
    `shorten the newest message, the system prompt or the tool definitions${byRequest ? ", or lower max_tokens" : ""}`;
  const numbers = {
    tokens: after.tokens,
    tokens_before_compaction: before.tokens,
    reserved_output_tokens: after.reservedOutputTokens,
    context_window: after.contextWindow,
    over_by: over,
  };
  const notice = result === null ? describe({ mode: "none", before }) : describe({ mode: result.notice.mode, before, after, notice: result.notice });
  return error(config.api, 413, "context_length_exceeded", message, numbers, { [NOTICE_HEADER]: notice });
}

/** A CompactionError from reading the request (INVALID_INPUT, EMPTY_HISTORY, INVALID_CONFIG …). */
function libraryError(api, e) {
  const code = typeof e?.code === "string" ? e.code : "INTERNAL";
  const message = e instanceof Error ? e.message : String(e);
  if (code === "INVALID_CONFIG") return error(api, 500, "proxy_misconfigured", `COMPACTION_OPTIONS: ${message}`);
  if (code === "INVALID_INPUT" || code === "EMPTY_HISTORY") return error(api, 400, "invalid_request", message, { library_code: code });
  return error(api, 500, "internal_error", message, { library_code: code });
}

/**
 * A JSON error in the endpoint's own shape, so SDKs show it: OpenAI
 * `{error: {message, type, code}}`, Anthropic `{type: "error", error: {type, message}}`;
 * `extra` fields join the inner object.
 */
function error(api, status, code, message, extra = {}, headers = {}) {
  const body =
    api === "anthropic"
      ? { type: "error", error: { type: status === 413 ? "request_too_large" : status >= 500 ? "api_error" : "invalid_request_error", code, message, ...extra } }
      : { error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", code, param: null, ...extra } };
  return Response.json(body, { status, headers });
}
