// The page's summarizer for the LLM modes: one streaming call to an
// OpenAI-compatible /chat/completions endpoint with fetch. The key lives in the
// caller's variables only; nothing is stored.
import { toOpenAIChat } from "./view.js";

/** The chat completions URL for what a person typed: a base URL (…/v1) or the full endpoint. */
export function chatCompletionsURL(endpoint) {
  const url = new URL(String(endpoint).trim());
  if (!/\/chat\/completions\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
  return url.href;
}

/**
 * The `data:` payloads of a server-sent event stream, one string per event
 * (several `data:` lines of one event joined by newlines), from a byte stream.
 * Lines may end in \n, \r\n or \r, and a chunk may end anywhere.
 */
export async function* sseData(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let data = [];
  const lines = function* (final) {
    for (;;) {
      const m = /\r\n|\r|\n/.exec(pending);
      if (!m || (m[0] === "\r" && m.index === pending.length - 1 && !final)) return; // a lone \r may be half of \r\n
      yield pending.slice(0, m.index);
      pending = pending.slice(m.index + m[0].length);
    }
  };
  const take = (line) => {
    if (line === "") {
      const event = data.length ? data.join("\n") : undefined;
      data = [];
      return event;
    }
    if (line.startsWith("data:")) data.push(line.slice(line[5] === " " ? 6 : 5));
    return undefined; // comments (":"), event:, id:, retry: say nothing about the text
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (const line of lines(done)) {
        const event = take(line);
        if (event !== undefined) yield event;
      }
      if (done) break;
    }
    if (pending) take(pending);
    const last = take("");
    if (last !== undefined) yield last;
  } finally {
    reader.releaseLock();
  }
}

/** A short, readable reason from a failed response. */
async function failure(response) {
  let detail = "";
  try {
    const raw = await response.text();
    try {
      const body = JSON.parse(raw);
      detail = body?.error?.message ?? body?.message ?? raw;
    } catch {
      detail = raw;
    }
  } catch {
    // the body could not be read: the status says enough
  }
  detail = String(detail).replace(/\s+/g, " ").trim().slice(0, 300);
  return new Error(`the endpoint answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${detail ? `: ${detail}` : ""}`);
}

/** Newer OpenAI reasoning models take `max_completion_tokens` instead of `max_tokens`. */
const usesCompletionTokens = (model) => /^(o\d|gpt-5)/.test(String(model).replace(/^.*\//, ""));

/**
 * A `summarize` function for `compact()`: streams the summary as an async
 * iterable of text (and a `{usage}` piece when the server reports it).
 * `format` is the history's format (its summarizer requests come in it).
 * `onAttempt(attempt)` is called when a request starts (2 is the retry after a
 * failed quality check), `onText(piece)` with each piece as it arrives.
 */
export function openAICompatibleSummarizer({ endpoint, apiKey, model, format, onAttempt, onText, fetchImpl }) {
  const url = chatCompletionsURL(endpoint);
  const doFetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
  return async function* summarize(request) {
    onAttempt?.(request.attempt);
    const name = request.model ?? model;
    const body = { model: name, messages: toOpenAIChat(request, format), stream: true, stream_options: { include_usage: true } };
    body[usesCompletionTokens(name) ? "max_completion_tokens" : "max_tokens"] = request.maxTokens;
    const headers = { "content-type": "application/json", accept: "text/event-stream" };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    let response;
    try {
      response = await doFetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: request.signal });
    } catch (e) {
      if (request.signal?.aborted) throw e;
      throw new Error(`could not reach ${url} (${e?.message ?? e}); check the address, that the server is up and that it allows this page's origin (CORS)`);
    }
    if (!response.ok) throw await failure(response);
    const type = response.headers.get("content-type") ?? "";
    if (!type.includes("text/event-stream")) {
      // A server that ignored stream: true answers with one JSON body.
      const json = await response.json();
      const text = json?.choices?.[0]?.message?.content ?? "";
      if (text) {
        onText?.(text);
        yield text;
      }
      if (json?.usage) yield { usage: json.usage };
      return;
    }
    for await (const data of sseData(response.body)) {
      if (data.trim() === "[DONE]") break;
      let chunk;
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new Error(`the endpoint sent an event that is not JSON: ${data.slice(0, 120)}`);
      }
      if (chunk?.error) throw new Error(`the endpoint reported an error mid-stream: ${chunk.error.message ?? JSON.stringify(chunk.error)}`);
      const piece = chunk?.choices?.[0]?.delta?.content;
      if (typeof piece === "string" && piece) {
        onText?.(piece);
        yield piece;
      }
      if (chunk?.usage) yield { usage: chunk.usage };
    }
  };
}
