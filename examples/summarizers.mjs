// Summarizers for chat-compaction's LLM modes (`structured`, `llm_replace`), written
// with nothing but fetch, as docs/llm-modes.md shows them. Each returns a function to
// pass as `summarize`; it streams the answer back as an async iterable of text,
// then reports the provider's token usage. `request.messages` is already in the
// format of your history, so use the summarizer of the API your history is for.
//
//   import { compact } from "chat-compaction";
//   import { openAISummarizer } from "./summarizers.mjs";
//   const summarize = openAISummarizer({ apiKey: process.env.OPENAI_API_KEY, model: "gpt-4o-mini" });
//   const { messages, notice } = await compact(history, { mode: "structured", summarize, timeoutMs: 60_000 });

/** The JSON `data:` payloads of a server-sent event stream (a fetch Response body). */
async function* serverSentEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        if (data && data !== "[DONE]") yield JSON.parse(data);
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** Throws with the status and the body of a failed response. */
async function failed(response) {
  const body = await response.text().catch(() => "");
  return new Error(`summary request failed: HTTP ${response.status} ${body.slice(0, 300)}`);
}

/**
 * The JSON payloads of a summary response: the events of a stream, or the one
 * answer of an endpoint that does not stream. Anything else (an HTML page from
 * a wrong URL or a sign-in wall) throws, quoting it: it is no empty summary.
 */
async function* answer(response) {
  if (!response.ok) throw await failed(response);
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream")) return yield* serverSentEvents(response.body);
  const body = await response.text();
  let json;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`summary request failed: the endpoint answered ${type || "no content-type"}, neither a stream nor JSON: ${body.slice(0, 300)}`);
  }
  yield json;
}

/**
 * For any OpenAI-compatible Chat Completions API (OpenAI, OpenRouter, Groq, vLLM,
 * Ollama, llama.cpp …) and OpenAI-format or Moltis histories.
 */
export function openAISummarizer({ apiKey, model = "gpt-4o-mini", baseURL = "https://api.openai.com/v1" } = {}) {
  return async function* summarize(request) {
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({
        model: request.model ?? model, // the options' summaryModel wins
        messages: request.messages, // system message first, then the conversation, then the instruction
        max_tokens: request.maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      }),
      signal: request.signal, // fires on abort and on timeoutMs
    });
    for await (const chunk of answer(response)) {
      // (gateways such as OpenRouter report a failure as an event of the stream)
      if (chunk.error) throw new Error(`the endpoint reported an error: ${chunk.error.message ?? JSON.stringify(chunk.error)}`);
      // a piece of the stream, or the whole message of an answer that did not stream
      const text = chunk.choices?.[0]?.delta?.content ?? chunk.choices?.[0]?.message?.content;
      if (text) yield text;
      if (chunk.usage) yield { usage: chunk.usage }; // prompt_tokens / completion_tokens
    }
  };
}

/** For the Anthropic Messages API and Anthropic-format histories. */
export function anthropicSummarizer({ apiKey, model = "claude-haiku-4-5", baseURL = "https://api.anthropic.com" } = {}) {
  return async function* summarize(request) {
    const response = await fetch(`${baseURL}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        ...(apiKey ? { "x-api-key": apiKey } : {}),
        // only needed when this runs in a browser page
        "anthropic-dangerous-direct-browser-access": "true",
      },
      body: JSON.stringify({
        model: request.model ?? model,
        system: request.system, // kept apart from the messages, as the API wants
        messages: request.messages, // tool_use / tool_result blocks still paired
        max_tokens: request.maxTokens,
        stream: true,
      }),
      signal: request.signal,
    });
    const usage = { input_tokens: 0, output_tokens: 0 };
    for await (const event of answer(response)) {
      if (event.type === "content_block_delta" && event.delta?.type === "text_delta") yield event.delta.text;
      else if (event.type === "message_start") usage.input_tokens = event.message?.usage?.input_tokens ?? 0;
      else if (event.type === "message_delta") usage.output_tokens = event.usage?.output_tokens ?? 0;
      else if (event.type === "message") {
        // an answer that did not stream
        for (const block of event.content ?? []) if (block.type === "text") yield block.text;
        usage.input_tokens = event.usage?.input_tokens ?? 0;
        usage.output_tokens = event.usage?.output_tokens ?? 0;
      } else if (event.type === "error") throw new Error(`the endpoint reported an error: ${event.error?.message ?? "unknown error"}`);
    }
    yield { usage };
  };
}
