// A strict TypeScript consumer of the installed package: every export is called with
// the types a user would write, and wrong option types must be rejected.
import {
  compact,
  compactBody,
  compactIfNeeded,
  measureBody,
  compactSync,
  estimateTokens,
  measure,
  compactJsonString,
  parseConfig,
  rebase,
  shouldCompact,
  validate,
  CompactionError,
  type AiSdkModelMessage,
  type AiSdkUIMessage,
  type AnthropicRequest,
  type Format,
  type GeminiContent,
  type GeminiRequest,
  type ResponsesItem,
  type ResponsesRequest,
  type Validation,
  type ViolationCode,
  type CompactionOptions,
  type CompactionResult,
  type ErrorCode,
  type Notice,
  type OpenAIMessage,
  type Summarizer,
  type SummarizerRequest,
  type Warning,
} from "chat-compaction";
import { initialize, initializeSync, compactSync as compactSyncAfterInit, type WasmSource } from "chat-compaction/init";

const history: OpenAIMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "What is in src/app.ts?" },
  { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
  { role: "tool", tool_call_id: "c1", content: "export const x = 1;" },
  { role: "assistant", content: "It exports x." },
];

const options: CompactionOptions = { mode: "recency_preserving", contextWindow: 8000, protectHead: 3 };

// compactSync with an array: messages keep the caller's message type.
const fromArray: CompactionResult<OpenAIMessage> = compactSync(history, options);
const firstRole: OpenAIMessage["role"] | undefined = fromArray.messages[0]?.role;
const notice: Notice = fromArray.notice;
const text: string = notice.text;
const after: number = notice.messagesAfter;

// compactSync with an Anthropic request object: `request` is the same type.
const request: AnthropicRequest = {
  system: "Be brief.",
  messages: [
    { role: "user", content: "hello" },
    { role: "assistant", content: [{ type: "text", text: "hi" }] },
  ],
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
};
const fromRequest = compactSync(request, { mode: "deterministic", format: "anthropic" });
const system: AnthropicRequest["system"] = fromRequest.request.system;
const sameMessages: AnthropicRequest["messages"] = fromRequest.request.messages;

async function asyncUse(): Promise<number> {
  const r = await compact(history, { mode: "deterministic", contextWindow: 8000 });
  const r2 = await compact(request, { mode: "recency_preserving" });
  return r.messages.length + r2.request.messages.length;
}

// The LLM modes: every summarizer shape, the request, the fallback, rebase.
const summarize: Summarizer = async (req: SummarizerRequest) => {
  const sent: number = req.messages.length + req.maxTokens + req.estimatedInputTokens + req.attempt;
  const model: string | undefined = req.model;
  const aborted: boolean = req.signal.aborted;
  return { text: `${req.mode} ${req.system} ${req.instruction} ${req.previousSummary ?? ""} ${sent} ${model} ${aborted}`, usage: { prompt_tokens: 1, completion_tokens: 2 } };
};
const streaming: Summarizer = async function* () {
  yield "## Goal";
  yield new TextEncoder().encode("\n(none)");
  yield { usage: { inputTokens: 3, outputTokens: 4 } };
};
const plain: Summarizer = () => "## Goal\n(none)";
const viaStream: Summarizer = () => new ReadableStream<string>({ start(c) { c.enqueue("x"); c.close(); } });
async function llmUse(signal: AbortSignal): Promise<OpenAIMessage[]> {
  const r = await compact(history, { mode: "structured", summarize, signal, timeoutMs: 30000, summaryModel: "gpt-4o-mini", maxSummaryTokens: 1000 });
  const fallback: "LLM_FAILED" | "TIMEOUT" | "EMPTY_SUMMARY" | "QUALITY_CHECK" | "NOTHING_TO_SUMMARIZE" | undefined = r.notice.fallback?.code;
  const estimated: true | undefined = r.notice.usageEstimated;
  void fallback;
  void estimated;
  await compact(request, { mode: "llm_replace", summarize: streaming });
  await compact(history, { mode: "structured", summarize: plain });
  await compact(history, { mode: "structured", summarize: viaStream });
  const next: OpenAIMessage[] = rebase(r, [...history, { role: "user", content: "more" }]);
  const nextRequest: AnthropicRequest = rebase(fromRequest, request);
  void nextRequest;
  return next;
}

const resultJson: string = compactJsonString(JSON.stringify(history), { mode: "recency_preserving" });
// A body held as text or bytes: decided and compacted in one call.
const fromText = compactBody(JSON.stringify(request), { mode: "recency_preserving", force: true });
const bodyText: string = fromText.body;
const fromBytes = compactBody(new TextEncoder().encode(bodyText), { contextWindow: 8000 });
const bodyBytes: Uint8Array = fromBytes.body;
const fill: number = measureBody(bodyBytes).fraction + (fromBytes.notice?.tokensAfter ?? 0);
// Objects: one read decides and compacts.
const decided = compactIfNeeded(request, { contextWindow: 8000 });
const toSend: AnthropicRequest = decided.result?.request ?? request;
void toSend;
void fill;
console.log(resultJson.length);
const tokens: number = estimateTokens(history) + estimateTokens("some text", { tokenizer: "cl100k" }) + estimateTokens(request);
const due: boolean = shouldCompact(history, { contextWindow: 8000 }, "pending text");
const config = await parseConfig('[chat.compaction]\nmode = "deterministic"\n');
const protectHead: number = config.options.protectHead;
// The table's options go on as they are (without context_window, the model's window applies).
compactSync(history, config.options);
// A request written inline, with keys of its own (the README's context meter).
const inline = measure({ model: "gpt-4o", messages: history, tools: [], max_completion_tokens: 4000 }, {}, "draft");
const inlineValid: Validation = validate({ model: "gpt-4o", messages: history }, { cache: false });
console.log(inline.fraction, inlineValid.format, estimateTokens({ model: "gpt-4o", messages: history }));
compactSync(history, { count_tokens: (text: string) => text.length });
const warningCodes: Array<Warning["code"]> = config.warnings.map((w) => w.code);

try {
  compactSync([{ role: "user", content: "x" }]);
} catch (e) {
  if (e instanceof CompactionError) {
    const code: ErrorCode = e.code;
    const message: string = e.message;
    void code;
    void message;
  }
}
const made = new CompactionError("INVALID_INPUT", "made by hand");
const isError: Error = made;

// The manual-init entry.
async function manualInit(bytes: Uint8Array, module: WebAssembly.Module): Promise<void> {
  initializeSync(bytes);
  initializeSync(module);
  await initialize(new URL("https://example.invalid/chat_compaction_bg.wasm"));
  await initialize(bytes);
  const source: WasmSource = module;
  await initialize(source);
  compactSyncAfterInit(history);
}

// The newer formats: request objects keep their own message key.
const responses: ResponsesRequest = {
  model: "gpt-5",
  instructions: "Be brief.",
  input: [
    { role: "user", content: "Weather in Paris?" },
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAA" },
    { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
    { type: "function_call_output", call_id: "call_1", output: "sunny" },
    { type: "web_search_call", id: "ws_1", status: "completed" },
  ],
};
const fromResponses = compactSync(responses, { mode: "recency_preserving", alternation: "keep" });
const items: ResponsesItem[] = fromResponses.request.input;
const gemini: GeminiRequest = {
  systemInstruction: { parts: [{ text: "Be brief." }] },
  contents: [
    { role: "user", parts: [{ text: "Weather in Paris?" }] },
    { role: "model", parts: [{ functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "c2ln" }] },
    { role: "user", parts: [{ functionResponse: { name: "weather", response: { sky: "sunny" } } }] },
  ],
};
const fromGemini = compactSync(gemini, { format: "gemini", alternation: "merge" });
const turns: GeminiContent[] = fromGemini.request.contents;
const rebasedGemini: GeminiRequest = rebase(fromGemini, gemini);
const ui: AiSdkUIMessage[] = [
  { id: "u1", role: "user", parts: [{ type: "text", text: "Weather?" }] },
  { id: "a1", role: "assistant", parts: [{ type: "tool-weather", toolCallId: "c1", state: "output-available", input: {}, output: { sky: "sunny" } }, { type: "dynamic-tool", toolName: "lookup", toolCallId: "c2", state: "output-error", input: {}, errorText: "down" }] },
];
const fromUi: CompactionResult<AiSdkUIMessage> = compactSync(ui, { format: "ai-sdk-ui" });
const model: AiSdkModelMessage[] = [
  { role: "user", content: "Weather?" },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "weather", input: {} }] },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "text", value: "sunny" } }] },
];
const checked: Validation = validate(model, { format: "ai-sdk", provider: "anthropic", strictAlternation: true });
const codes: ViolationCode[] = checked.violations.map((v) => v.code);
const where: number[] = checked.violations.map((v) => v.index);
const detected: Format = validate(gemini).format;
validate(responses, { provider: "bedrock", strict_alternation: false });
// The options a compaction took pass as they are.
const compactOptions = { format: "ai-sdk", mode: "recency_preserving", contextWindow: 8000 } as const;
validate(model, compactOptions);
compactSync(model, compactOptions);

// Wrong option types are rejected.
// @ts-expect-error "mistral" is not a provider validate knows
validate(model, { provider: "mistral" });
// @ts-expect-error alternation is "keep" or "merge"
compactSync(history, { alternation: "always" });
// @ts-expect-error not a violation code
const badCode: ViolationCode = "NOPE";
// @ts-expect-error protectHead must be a number
compactSync(history, { protectHead: "3" });
// @ts-expect-error "fast" is not a mode
compactSync(history, { mode: "fast" });
// @ts-expect-error an unknown error code
new CompactionError("NOPE", "x");
// @ts-expect-error estimateTokens takes text or a history, not a number
estimateTokens(42);
// @ts-expect-error summarize must be a function
compact(history, { mode: "structured", summarize: "gpt-4o" });
// @ts-expect-error a summarizer returns text, not a number
compact(history, { mode: "structured", summarize: () => 42 });
// @ts-expect-error shouldCompact returns a boolean
const notANumber: number = shouldCompact(history);

export { firstRole, text, after, system, sameMessages, asyncUse, llmUse, tokens, due, protectHead, warningCodes, isError, manualInit, notANumber };
export { items, turns, rebasedGemini, fromUi, codes, where, detected, badCode };
