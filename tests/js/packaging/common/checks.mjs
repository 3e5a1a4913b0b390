// Behaviour checks run against the INSTALLED package in every runtime (Node ESM and
// CJS, Chromium, workerd, Deno, Bun). Portable: no runtime-specific imports. Copied
// into each fixture at test time, next to tests/js/rules.mjs and the sample history.
import { checkRules } from "./rules.mjs";

function assert(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

const MODES = [
  ["deterministic", "Deterministic"],
  ["recency_preserving", "Recency preserving"],
];

/**
 * `api` is the module namespace (or require() result) of the installed package;
 * `sample` is examples/data/tau-bench-airline-3.json (OpenAI format, with tool calls).
 * Returns a short summary; throws on the first failed check.
 */
export async function runChecks(api, sample) {
  for (const name of ["compactSync", "compact", "rebase", "compactJsonString", "estimateTokens", "measure", "shouldCompact", "parseConfig", "validate", "CompactionError"]) {
    assert(typeof api[name] === "function", `export ${name} is a function (got ${typeof api[name]})`);
  }
  const { compactSync, compact, estimateTokens, shouldCompact, parseConfig, CompactionError } = api;
  const original = JSON.stringify(sample);
  const summary = {};

  for (const [mode, label] of MODES) {
    const options = { mode, contextWindow: 8000 };
    const r = compactSync(sample, options);
    assert(Array.isArray(r.messages), `${mode}: messages is an array`);
    checkRules("openai", r.messages);
    const n = r.notice;
    assert(n && typeof n.text === "string", `${mode}: notice.text is a string`);
    assert(n.text.startsWith(`🧹 Conversation compacted\nMode: ${label}`), `${mode}: notice.text starts with the mode line, got ${JSON.stringify(n.text)}`);
    assert(n.mode === mode, `${mode}: notice.mode`);
    assert(n.messagesBefore === sample.length, `${mode}: messagesBefore ${n.messagesBefore} === ${sample.length}`);
    assert(n.messagesAfter === r.messages.length, `${mode}: messagesAfter ${n.messagesAfter} === ${r.messages.length}`);
    assert(n.messagesAfter < n.messagesBefore, `${mode}: messagesAfter ${n.messagesAfter} < messagesBefore ${n.messagesBefore}`);
    assert(n.tokensAfter < n.tokensBefore, `${mode}: tokensAfter ${n.tokensAfter} < tokensBefore ${n.tokensBefore}`);
    const viaString = JSON.parse(api.compactJsonString(original, options));
    assert(JSON.stringify(viaString.messages) === JSON.stringify(r.messages), `${mode}: compactJsonString gives the same messages`);
    assert(Array.isArray(r.warnings) && r.warnings.length === 0, `${mode}: no warnings`);
    assert(JSON.stringify(sample) === original, `${mode}: input left unchanged`);
    const viaPromise = await compact(sample, options);
    assert(JSON.stringify(viaPromise) === JSON.stringify(r), `${mode}: compact() equals compactSync()`);
    summary[mode] = `${n.messagesBefore}→${n.messagesAfter} msgs`;
  }

  // A request object (Anthropic format) comes back with only its messages replaced.
  const messages = [{ role: "user", content: "first question about src/app.ts" }];
  for (let i = 0; i < 6; i++) {
    messages.push(
      { role: "assistant", content: [{ type: "text", text: "reading" }, { type: "tool_use", id: `t${i}`, name: "read", input: { path: `src/f${i}.ts` } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: "x".repeat(3000) }] },
    );
  }
  messages.push({ role: "assistant", content: "first answer" }, { role: "user", content: "second question" });
  const request = { model: "claude-sonnet-4-5", max_tokens: 1024, system: "Be brief.", messages };
  // The meter counts what the request spends besides its messages and takes the window from its model.
  const meter = api.measure(request);
  assert(meter.contextWindow === 200000 && meter.windowSource === "model", `measure: window of claude-* (${meter.contextWindow}, ${meter.windowSource})`);
  assert(meter.reservedOutputTokens === 1024 && meter.threshold === Math.round((200000 - 1024) * 0.95), `measure: max_tokens reserved (${meter.threshold})`);
  assert(meter.perMessage.length === messages.length && meter.systemTokens > 0, "measure: one count per message, the system prompt counted");
  assert(meter.tokens === meter.systemTokens + meter.perMessage.reduce((a, b) => a + b, 0), "measure: the parts add up");
  const rr = compactSync(request, { mode: "recency_preserving", contextWindow: 8000 });
  assert(rr.request && rr.request.system === "Be brief." && rr.request.model === request.model, "request object: other fields kept");
  assert(JSON.stringify(Object.keys(rr.request)) === JSON.stringify(Object.keys(request)), "request object: same keys in order");
  assert(rr.request.messages === rr.messages, "request object: request.messages is the result's messages");
  assert(rr.notice.tokensAfter < rr.notice.tokensBefore, "request object: old tool output pruned");
  assert(request.messages === messages && messages.length === 15, "request object: input left unchanged");
  checkRules("anthropic", rr.messages);

  // A newer format: Gemini contents in a request keyed `contents`, compacted and validated.
  const contents = [{ role: "user", parts: [{ text: "Plan my week: the weather for each day." }] }];
  for (let i = 0; i < 8; i++) {
    contents.push(
      { role: "model", parts: [{ functionCall: { name: "get_weather", args: { day: i } }, thoughtSignature: `sig${i}_${"QUJD".repeat(30)}` }] },
      { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { forecast: "sunny and warm ".repeat(80) } } }] },
      { role: "model", parts: [{ text: `Day ${i} will be sunny.` }] },
      { role: "user", parts: [{ text: `And day ${i + 1}?` }] },
    );
  }
  const gemini = { systemInstruction: { parts: [{ text: "Be brief." }] }, contents, generationConfig: { temperature: 0 } };
  const geminiBefore = JSON.stringify(gemini);
  const gr = compactSync(gemini, { mode: "recency_preserving", contextWindow: 2000 });
  assert(gr.notice.format === "gemini", `gemini: detected (got ${gr.notice.format})`);
  assert(gr.request && gr.request.contents === gr.messages && !("messages" in gr.request), "gemini: request.contents replaced, no messages key added");
  assert(JSON.stringify(Object.keys(gr.request)) === JSON.stringify(Object.keys(gemini)), "gemini: same keys in order");
  assert(gr.notice.messagesAfter < gr.notice.messagesBefore, `gemini: ${gr.notice.messagesBefore} → ${gr.notice.messagesAfter} turns`);
  assert(gr.messages.at(-1) === contents.at(-1), "gemini: the newest turn is the caller's own object");
  assert(JSON.stringify(gemini) === geminiBefore, "gemini: input left unchanged");
  const checked = api.validate(gr.request);
  assert(checked.format === "gemini" && checked.violations.length === 0, `gemini: the result validates: ${JSON.stringify(checked.violations)}`);
  const endsOnModel = api.validate({ contents: contents.slice(0, -1) });
  assert(endsOnModel.violations.length === 1 && endsOnModel.violations[0].code === "ENDS_ON_MODEL" && endsOnModel.violations[0].index === contents.length - 2, `validate: ENDS_ON_MODEL (got ${JSON.stringify(endsOnModel.violations)})`);
  const reasoningLast = api.validate({ model: "gpt-5", input: [{ role: "user", content: "hi" }, { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAA" }] });
  assert(reasoningLast.format === "openai-responses" && reasoningLast.violations[0]?.code === "REASONING_WITHOUT_FOLLOWER", `validate: REASONING_WITHOUT_FOLLOWER (got ${JSON.stringify(reasoningLast)})`);
  summary.gemini = `${gr.notice.messagesBefore}→${gr.notice.messagesAfter} turns`;

  // The LLM modes: an async summarizer that streams, a fallback, rebase.
  const headings = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps", "## Critical Context"];
  const text = headings.map((h) => (h === "## Progress" ? h : `${h}\n(none)`)).join("\n");
  let seen;
  const streamed = async function* (req) {
    seen = req;
    await new Promise((r) => setTimeout(r, 1));
    yield text.slice(0, 40);
    yield new TextEncoder().encode(text.slice(40));
    yield { usage: { prompt_tokens: 1234, completion_tokens: 567 } };
  };
  const growing = sample.slice();
  const pending = compact(growing, { mode: "structured", contextWindow: 8000, summarize: streamed });
  growing.push({ role: "user", content: "and one more thing" });
  const structured = await pending;
  assert(structured.notice.mode === "structured", `structured: notice.mode ${structured.notice.mode} (${structured.notice.fallback?.reason})`);
  assert(structured.summary === text, "structured: the summary as streamed");
  assert(structured.notice.text.includes("Used 1801 tokens (1234 in + 567 out)"), "structured: usage in the notice");
  assert(seen.messages[0].role === "system" && typeof seen.signal?.aborted === "boolean", "structured: the request");
  checkRules("openai", structured.messages);
  const rebased = api.rebase(structured, growing);
  assert(rebased.length === structured.messages.length + 1 && rebased.at(-1) === growing.at(-1), "rebase appends what came meanwhile");
  const fellBack = await compact(sample, { mode: "structured", contextWindow: 8000, summarize: () => { throw new Error("down"); } });
  assert(fellBack.notice.mode === "recency_preserving" && fellBack.notice.fallback.code === "LLM_FAILED", "structured falls back");
  let failed;
  await compact(sample, { mode: "llm_replace", summarize: () => "" }).catch((e) => { failed = e; });
  assert(failed instanceof CompactionError && failed.code === "EMPTY_SUMMARY", "llm_replace: EMPTY_SUMMARY");
  summary.structured = `${structured.notice.messagesBefore}→${structured.notice.messagesAfter} msgs`;

  // Bad input: a coded Error, then the same instance keeps working.
  let caught;
  try {
    compactSync([{ role: "user", content: 42 }]);
  } catch (e) {
    caught = e;
  }
  assert(caught !== undefined, "bad input throws");
  assert(caught instanceof Error, `bad input throws an Error (got ${Object.prototype.toString.call(caught)})`);
  assert(caught instanceof CompactionError, "bad input throws a CompactionError");
  assert(caught.code === "INVALID_INPUT", `error code INVALID_INPUT (got ${caught.code})`);
  assert(typeof caught.message === "string" && caught.message.length > 0, "error has a message");
  const again = compactSync(sample, { mode: "recency_preserving", contextWindow: 8000 });
  assert(again.notice.messagesAfter < again.notice.messagesBefore, "a good call works after the error");
  checkRules("openai", again.messages);

  // The other exports.
  const tokens = estimateTokens(sample);
  assert(Number.isInteger(tokens) && tokens > 1000, `estimateTokens(sample) = ${tokens}`);
  assert(estimateTokens("") === 0, "estimateTokens('') === 0");
  assert(shouldCompact(sample, { contextWindow: 8000 }) === true, "shouldCompact at 8000 is true");
  assert(shouldCompact(sample, { contextWindow: 200000 }) === false, "shouldCompact at 200000 is false");
  const config = await parseConfig('[chat.compaction]\nmode = "recency-preserving"\n');
  assert(config.options.mode === "recency_preserving", "parseConfig reads the mode");

  // JSON text in, JSON text out (what a Worker does with a request body).
  const requestText = JSON.stringify({ model: "gpt-4o", messages: sample });
  const body = api.compactBody(requestText, { mode: "recency_preserving", contextWindow: 8000 });
  assert(body.compacted === true && typeof body.body === "string", "compactBody compacts a request over the threshold");
  const objects = compactSync({ model: "gpt-4o", messages: sample }, { mode: "recency_preserving", contextWindow: 8000 });
  assert(JSON.stringify(JSON.parse(body.body).messages) === JSON.stringify(objects.messages), "compactBody gives the messages compactSync gives");
  const bytes = new TextEncoder().encode(requestText);
  const fits = api.compactBody(bytes, { contextWindow: 200000 });
  assert(fits.compacted === false && fits.body === bytes, "a request that fits comes back as the caller's bytes");
  assert(api.measureBody(bytes, { contextWindow: 200000 }).tokens === fits.meter.tokens, "measureBody reads the same meter");

  summary.tokens = tokens;
  return summary;
}
