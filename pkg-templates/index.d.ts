// Types of the chat-compaction package (one set for every runtime entry).

/** The compaction strategies. */
export type Mode = "deterministic" | "recency_preserving" | "structured" | "llm_replace";
/** Mode spellings accepted on input (Moltis's documented hyphenated aliases included). */
export type ModeInput = Mode | "recency-preserving" | "llm-replace";
/**
 * Message formats: OpenAI Chat Completions, Anthropic Messages, Moltis sessions,
 * OpenAI Responses input items, Vercel AI SDK `ModelMessage`s and `UIMessage`s,
 * Google Gemini `contents`.
 */
export type Format = "openai" | "anthropic" | "moltis" | "openai-responses" | "ai-sdk" | "ai-sdk-ui" | "gemini";
/**
 * Whether what compaction adds (marker, summary, stubs) joins the neighbouring
 * message of the same role so that roles alternate (`"merge"`), or stays a
 * message of its own (`"keep"`).
 */
export type Alternation = "keep" | "merge";
/** Token estimator profiles. */
export type Tokenizer = "o200k" | "cl100k" | "claude";

// ---- OpenAI Chat Completions -------------------------------------------------

/** A content part of an OpenAI message. */
export type OpenAIContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string; detail?: "auto" | "low" | "high" } }
  | { type: "input_audio"; input_audio: { data: string; format: string } }
  | { type: "refusal"; refusal: string };

/** A function tool call made by an OpenAI assistant message. */
export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; /** JSON-encoded arguments. */ arguments: string };
}

/** A message of the OpenAI Chat Completions API. Unknown fields are kept verbatim. */
export type OpenAIMessage =
  | { role: "system" | "developer"; content: string | OpenAIContentPart[]; name?: string; [extra: string]: unknown }
  | { role: "user"; content: string | OpenAIContentPart[]; name?: string; [extra: string]: unknown }
  | { role: "assistant"; content?: string | OpenAIContentPart[] | null; tool_calls?: OpenAIToolCall[]; refusal?: string | null; [extra: string]: unknown }
  | { role: "tool"; tool_call_id: string; content: string | OpenAIContentPart[]; [extra: string]: unknown };

// ---- Anthropic Messages --------------------------------------------------------

/** A text block. */
export interface AnthropicTextBlock { type: "text"; text: string; [extra: string]: unknown }
/** An image block. */
export interface AnthropicImageBlock { type: "image"; source: { type: string; [extra: string]: unknown }; [extra: string]: unknown }
/** A tool call in an assistant message. */
export interface AnthropicToolUseBlock { type: "tool_use"; id: string; name: string; input: unknown; [extra: string]: unknown }
/** A tool result in the user message right after the call. */
export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
  is_error?: boolean;
  [extra: string]: unknown;
}
/** Extended thinking. */
export interface AnthropicThinkingBlock { type: "thinking"; thinking: string; signature?: string; [extra: string]: unknown }
/** Any content block of the Anthropic Messages API. */
export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | { type: "redacted_thinking"; data: string; [extra: string]: unknown }
  | { type: "document"; source: unknown; [extra: string]: unknown };

/** A message of the Anthropic Messages API. */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicContentBlock[];
  [extra: string]: unknown;
}

/** An Anthropic Messages request: `system` stays outside the messages. */
export interface AnthropicRequest {
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
  [extra: string]: unknown;
}

// ---- Moltis sessions -------------------------------------------------------------

/** A message of a Moltis session (OpenAI-like, plus `notice`, `tool_result` and `created_at`). */
export type MoltisMessage =
  | (OpenAIMessage & { created_at?: number })
  | { role: "notice"; content: string; created_at?: number; [extra: string]: unknown }
  | {
      role: "tool_result";
      tool_call_id: string;
      tool_name?: string;
      success?: boolean;
      result?: unknown;
      error?: string;
      created_at?: number;
      [extra: string]: unknown;
    };

// ---- OpenAI Responses API input items ----------------------------------------------

/** A content part of a Responses message item. */
export type ResponsesContentPart =
  | { type: "input_text" | "output_text"; text: string; [extra: string]: unknown }
  | { type: "input_image"; image_url?: string; file_id?: string; detail?: "auto" | "low" | "high"; [extra: string]: unknown }
  | { type: "input_file"; file_id?: string; file_data?: string; filename?: string; [extra: string]: unknown }
  | { type: "refusal"; refusal: string; [extra: string]: unknown };

/** A message item (`type` may be left out, as in `{role, content}`). */
export interface ResponsesMessageItem {
  type?: "message";
  role: "user" | "assistant" | "system" | "developer";
  content: string | ResponsesContentPart[];
  id?: string;
  status?: string;
  [extra: string]: unknown;
}
/** A function call the model made; answered by a `function_call_output` with the same `call_id`. */
export interface ResponsesFunctionCallItem {
  type: "function_call";
  call_id: string;
  name: string;
  /** JSON-encoded arguments. */
  arguments: string;
  id?: string;
  status?: string;
  [extra: string]: unknown;
}
/** The result of a function call. */
export interface ResponsesFunctionCallOutputItem {
  type: "function_call_output";
  call_id: string;
  output: string | ResponsesContentPart[];
  id?: string;
  [extra: string]: unknown;
}
/** A custom (free-form input) tool call and its output. */
export type ResponsesCustomToolItem =
  | { type: "custom_tool_call"; call_id: string; name: string; input: string; id?: string; [extra: string]: unknown }
  | { type: "custom_tool_call_output"; call_id: string; output: string | ResponsesContentPart[]; id?: string; [extra: string]: unknown };
/** Reasoning; `encrypted_content` is opaque and sent back byte for byte. */
export interface ResponsesReasoningItem {
  type: "reasoning";
  id?: string;
  summary: Array<{ type: "summary_text"; text: string; [extra: string]: unknown }>;
  encrypted_content?: string | null;
  [extra: string]: unknown;
}
/**
 * An item of the OpenAI Responses API `input`. Other item types (server-run
 * tools such as `web_search_call`, `item_reference`, `compaction` …) are kept as
 * they are.
 */
export type ResponsesItem =
  | ResponsesMessageItem
  | ResponsesFunctionCallItem
  | ResponsesFunctionCallOutputItem
  | ResponsesCustomToolItem
  | ResponsesReasoningItem
  | { type: string; [extra: string]: unknown };

/** A Responses API request: the items are `input`, the system prompt `instructions`. */
export interface ResponsesRequest {
  input: ResponsesItem[];
  instructions?: string;
  [extra: string]: unknown;
}

// ---- Vercel AI SDK ModelMessage ----------------------------------------------------

/** Binary data of an AI SDK part: base64 or a data URL, bytes, or a URL. */
export type AiSdkData = string | Uint8Array | ArrayBuffer | URLLike;
/** A text part. */
export interface AiSdkTextPart { type: "text"; text: string; providerOptions?: Record<string, unknown>; [extra: string]: unknown }
/** An image part. */
export interface AiSdkImagePart { type: "image"; image: AiSdkData; mediaType?: string; [extra: string]: unknown }
/** A file part. */
export interface AiSdkFilePart { type: "file"; data: AiSdkData; mediaType: string; filename?: string; [extra: string]: unknown }
/** Reasoning (its provider metadata may carry signatures). */
export interface AiSdkReasoningPart { type: "reasoning"; text: string; providerOptions?: Record<string, unknown>; [extra: string]: unknown }
/** A tool call in an assistant message. */
export interface AiSdkToolCallPart { type: "tool-call"; toolCallId: string; toolName: string; input: unknown; providerExecuted?: boolean; [extra: string]: unknown }
/** A tool result in a tool message (or in the assistant message, for a tool the provider ran). */
export interface AiSdkToolResultPart {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  /** `{type: "text" | "json" | "error-text" | "error-json" | "content" | …, value}`. */
  output: unknown;
  [extra: string]: unknown;
}
/** A Vercel AI SDK `ModelMessage` (what `generateText` and `streamText` take). */
export type AiSdkModelMessage =
  | { role: "system"; content: string; providerOptions?: Record<string, unknown>; [extra: string]: unknown }
  | { role: "user"; content: string | Array<AiSdkTextPart | AiSdkImagePart | AiSdkFilePart>; providerOptions?: Record<string, unknown>; [extra: string]: unknown }
  | {
      role: "assistant";
      content: string | Array<AiSdkTextPart | AiSdkFilePart | AiSdkReasoningPart | AiSdkToolCallPart | AiSdkToolResultPart | { type: string; [extra: string]: unknown }>;
      providerOptions?: Record<string, unknown>;
      [extra: string]: unknown;
    }
  | { role: "tool"; content: Array<AiSdkToolResultPart | { type: string; [extra: string]: unknown }>; providerOptions?: Record<string, unknown>; [extra: string]: unknown };

// ---- Vercel AI SDK UIMessage -------------------------------------------------------

/** The state of a tool part: the call, and its result once there is one. */
export type AiSdkToolState =
  | "input-streaming"
  | "input-available"
  | "approval-requested"
  | "approval-responded"
  | "output-available"
  | "output-error"
  | "output-denied";
/** The fields of a tool part: `input` once the call is known, `output` or `errorText` once it ran. */
export interface AiSdkToolPartFields {
  toolCallId: string;
  state: AiSdkToolState;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  providerExecuted?: boolean;
  [extra: string]: unknown;
}
/** A tool part of a statically known tool (`tool-<name>`). */
export interface AiSdkUIToolPart extends AiSdkToolPartFields { type: `tool-${string}` }
/** A tool part of a tool known only at run time. */
export interface AiSdkUIDynamicToolPart extends AiSdkToolPartFields { type: "dynamic-tool"; toolName: string }
/** A part of a `UIMessage`. */
export type AiSdkUIPart =
  | { type: "text"; text: string; state?: "streaming" | "done"; [extra: string]: unknown }
  | { type: "reasoning"; text: string; state?: "streaming" | "done"; [extra: string]: unknown }
  | { type: "file"; mediaType: string; url: string; filename?: string; [extra: string]: unknown }
  | { type: "step-start"; [extra: string]: unknown }
  | AiSdkUIToolPart
  | AiSdkUIDynamicToolPart
  | { type: string; [extra: string]: unknown };
/** A Vercel AI SDK `UIMessage` (what `useChat` holds): the call and its result live in one tool part. */
export interface AiSdkUIMessage {
  id: string;
  role: "system" | "user" | "assistant";
  parts: AiSdkUIPart[];
  metadata?: unknown;
  [extra: string]: unknown;
}

// ---- Google Gemini contents --------------------------------------------------------

/** A part of a Gemini content; any part may carry an opaque `thoughtSignature`, kept with it byte for byte. */
export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string; [extra: string]: unknown }
  | { functionCall: { name: string; args?: Record<string, unknown>; id?: string; [extra: string]: unknown }; thoughtSignature?: string; [extra: string]: unknown }
  | { functionResponse: { name: string; response?: Record<string, unknown>; id?: string; parts?: unknown[]; [extra: string]: unknown }; [extra: string]: unknown }
  | { inlineData: { mimeType: string; data: string; [extra: string]: unknown }; [extra: string]: unknown }
  | { fileData: { fileUri: string; mimeType?: string; [extra: string]: unknown }; [extra: string]: unknown }
  | { [extra: string]: unknown };
/** A Gemini content (one turn): a model turn's calls are answered by `functionResponse` parts in the next user turn. */
export interface GeminiContent {
  role?: "user" | "model";
  parts: GeminiPart[];
  [extra: string]: unknown;
}
/** A Gemini `generateContent` request: the turns are `contents`, the system prompt `systemInstruction`. */
export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: string | { parts: GeminiPart[]; role?: string; [extra: string]: unknown };
  [extra: string]: unknown;
}

/** A message in any supported format. */
export type Message =
  | OpenAIMessage
  | AnthropicMessage
  | MoltisMessage
  | ResponsesItem
  | AiSdkModelMessage
  | AiSdkUIMessage
  | GeminiContent;

/** A request object that holds the messages under `messages` (`{model, messages, …}`, `{system, messages, …}`). */
export interface RequestWithMessages<M extends Message = Message> {
  messages: M[];
  [extra: string]: unknown;
}
/** A request object that holds the items under `input` (OpenAI Responses). */
export interface RequestWithInput<M extends Message = Message> {
  input: M[];
  [extra: string]: unknown;
}
/** A request object that holds the turns under `contents` (Gemini). */
export interface RequestWithContents<M extends Message = Message> {
  contents: M[];
  [extra: string]: unknown;
}
/**
 * A request object: the messages are under the first of `messages`, `input`,
 * `contents` it has; the result's `request` replaces only that key.
 */
export type HistoryRequest<M extends Message = Message> = RequestWithMessages<M> | RequestWithInput<M> | RequestWithContents<M>;
/** The message type of a request object (under the first of `messages`, `input`, `contents`). */
export type MessagesOf<R> = R extends { messages: Array<infer M> }
  ? M
  : R extends { input: Array<infer M> }
    ? M
    : R extends { contents: Array<infer M> }
      ? M
      : never;

/** What `compact` accepts: a message array or a request object. */
export type History<M extends Message = Message> = M[] | HistoryRequest<M>;

// ---- Your own message types --------------------------------------------------------
//
// The functions take the SDKs' own types (`ChatCompletionMessageParam[]`,
// `MessageCreateParams`, `ModelMessage[]`, `UIMessage[]`, Gemini `Content[]`, …) and
// your own interfaces as they are: a message only has to look like one of the
// shapes below. What comes back keeps your type, widened by the messages compaction
// adds when those are not already of your type.

/**
 * What a message must look like to be passed in: it has a `role` (OpenAI, Anthropic,
 * Moltis, the AI SDK, your own), or a `type` or an `id` (OpenAI Responses items,
 * item references included), or is a Gemini content (`parts`). The library reads
 * the rest at run time.
 */
export type MessageLike =
  | { readonly role: string }
  | { readonly type: string }
  | { readonly id: string; readonly type?: string | null }
  | { readonly role?: string; readonly parts?: readonly unknown[] };

/**
 * What a request must look like to be passed in: its messages under `messages`,
 * `input` or `contents` (the first it has). At run time they must be an array
 * (INVALID_INPUT otherwise); the types also accept the SDK unions that allow a
 * string there (Responses `input`, Gemini `contents`).
 */
export type HistoryRequestLike =
  | { readonly messages: readonly MessageLike[] }
  | { readonly input?: string | readonly MessageLike[] }
  | { readonly contents: unknown };

/** What every function accepts as a history: a message array or a request object. */
export type HistoryLike = readonly MessageLike[] | HistoryRequestLike;

// What compaction adds, format by format: the marker and the summary are `user`
// messages carrying instructions for the model (not something the person wrote);
// stubs stand in for tool results whose calls were kept but whose results were not.
// With `alternation: "merge"` the text joins the neighbouring message instead.
// Added messages carry an `id` when the history's messages carry string ids
// (Responses items excepted: theirs are the server's).

/** OpenAI Chat and Moltis: marker or summary (`created_at` in Moltis sessions). */
export type OpenAIAddedText = { role: "user"; content: string; id?: string; created_at?: number };
/** OpenAI Chat and Moltis: a stub tool result. */
export type OpenAIAddedStub = { role: "tool"; tool_call_id: string; content: string; id?: string; created_at?: number };
/** Anthropic: marker or summary. */
export type AnthropicAddedText = { role: "user"; content: string; id?: string };
/** Anthropic: a user message of stub tool results. */
export type AnthropicAddedStub = { role: "user"; content: Array<{ type: "tool_result"; tool_use_id: string; content: string }>; id?: string };
/** OpenAI Responses: marker or summary. */
export type ResponsesAddedText = { type: "message"; role: "user"; content: Array<{ type: "input_text"; text: string }> };
/** OpenAI Responses: a stub output, of the kind the call was. */
export type ResponsesAddedStub =
  | { type: "function_call_output"; call_id: string; output: string }
  | { type: "custom_tool_call_output"; call_id: string; output: string };
/** AI SDK `ModelMessage`: marker or summary. */
export type AiSdkAddedText = { role: "user"; content: string; id?: string };
/** AI SDK `ModelMessage`: a tool message of stub results. */
export type AiSdkAddedStub = {
  role: "tool";
  id?: string;
  content: Array<{ type: "tool-result"; toolCallId: string; toolName: string; output: { type: "text"; value: string } }>;
};
/** AI SDK `UIMessage`: marker or summary (stubs go into the calling message's tool part). */
export type AiSdkUIAddedText = { id: string; role: "user"; parts: Array<{ type: "text"; text: string }> };
/** Gemini: marker or summary. */
export type GeminiAddedText = { role: "user"; parts: Array<{ text: string }>; id?: string };
/** Gemini: a user turn of stub `functionResponse` parts. */
export type GeminiAddedStub = {
  role: "user";
  id?: string;
  parts: Array<{ functionResponse: { name: string; id?: string; response: { result: string } } }>;
};

/** Every message compaction may add, in any format. */
export type AddedMessage =
  | OpenAIAddedText
  | OpenAIAddedStub
  | AnthropicAddedStub
  | ResponsesAddedText
  | ResponsesAddedStub
  | AiSdkAddedStub
  | AiSdkUIAddedText
  | GeminiAddedText
  | GeminiAddedStub;

/** Whether some member of the union `M` is an `S`. */
type HasMember<M, S> = [Extract<M, S>] extends [never] ? false : true;
/** The elements of an array type (of each array in a union). */
type ItemOf<C> = C extends readonly (infer E)[] ? E : never;
/** The content parts of the messages `M`. */
type PartOf<M> = M extends { readonly content: infer C } ? ItemOf<C> : never;

/**
 * The messages compaction adds to a history of `M`s, by the format `M` is in:
 * items with a `call_id` are Responses items, messages with `id` and `parts` AI SDK
 * UIMessages, `parts` without `content` Gemini contents, `tool_use` blocks Anthropic,
 * `tool-call` parts AI SDK ModelMessages, anything else OpenAI Chat (your own
 * `{role, content}` messages included).
 */
export type AddedMessageFor<M> = AddedByFormat[FormatOfMessages<M>];

/** The format a history of `M`s is in, as its type tells (see `AddedMessageFor`). */
type FormatOfMessages<M> =
  HasMember<M, { readonly call_id: string }> extends true ? "openai-responses"
  : HasMember<M, { readonly id: string; readonly parts: readonly unknown[] }> extends true ? "ai-sdk-ui"
  : HasMember<M, { readonly parts?: readonly unknown[]; readonly content?: undefined }> extends true ? "gemini"
  : HasMember<PartOf<M>, { readonly type: "tool_use" | "tool_result" }> extends true ? "anthropic"
  : HasMember<PartOf<M>, { readonly type: "tool-call" | "tool-result" }> extends true ? "ai-sdk"
  : "openai";

/** What compaction adds, by format. */
interface AddedByFormat {
  "openai-responses": ResponsesAddedText | ResponsesAddedStub;
  "ai-sdk-ui": AiSdkUIAddedText;
  gemini: GeminiAddedText | GeminiAddedStub;
  anthropic: AnthropicAddedText | AnthropicAddedStub;
  "ai-sdk": AiSdkAddedText | AiSdkAddedStub;
  openai: OpenAIAddedText | OpenAIAddedStub;
}

/**
 * The system message a summary request for a history of `M`s opens with, where
 * the format keeps it among the messages (Anthropic and Gemini keep it apart:
 * `request.system`). Moltis histories are asked for in OpenAI Chat messages.
 */
export type SystemMessageFor<M> = SystemByFormat[FormatOfMessages<M>];

/** The summary request's system message, by format. */
interface SystemByFormat {
  "openai-responses": { type: "message"; role: "system"; content: Array<{ type: "input_text"; text: string }> };
  "ai-sdk-ui": { id: string; role: "system"; parts: Array<{ type: "text"; text: string }> };
  gemini: never;
  anthropic: never;
  "ai-sdk": { role: "system"; content: string };
  openai: { role: "system"; content: string };
}

/**
 * The messages of a summary request for a history of `M`s: `M`s, what
 * compaction adds and the system message (for an SDK's message type, all of
 * them `M`s: the array goes to the SDK as it is).
 */
export type SummaryMessageFor<M> = M | AddedMessageFor<M> | SystemMessageFor<M>;

/**
 * The messages of a compacted history of `M`s: `M` itself when what compaction adds
 * is already an `M` (the SDKs' message types), else `M` or an added message (your
 * own `{id, role, content, createdAt}` type: an added message has an `id` when yours do). Kept
 * messages keep their fields; their contents may be shortened.
 */
export type Compacted<M> = [AddedMessageFor<M>] extends [M] ? M : M | AddedMessageFor<M>;

/** The key a request object keeps its messages under: the first of `messages`, `input`, `contents` its type has. */
type MessagesKey<R> = "messages" extends keyof R ? "messages" : "input" extends keyof R ? "input" : "contents" extends keyof R ? "contents" : never;

/**
 * The message type of a request object. Gemini's `contents` may also be parts or a
 * string in the SDK's type; only contents (`{role, parts}`) count here.
 */
export type MessagesOfRequest<R> = R extends unknown
  ? MessagesKey<R> extends "contents"
    ? Extract<ItemOf<R["contents" & keyof R]>, { readonly parts?: readonly unknown[] }>
    : ItemOf<R[MessagesKey<R> & keyof R]>
  : never;

/**
 * A compacted request of type `R`: `R` itself when what compaction adds fits its
 * message type (so it goes back into the SDK call as it is), else `R` with the
 * message key widened to `Compacted<…>[]`.
 */
export type CompactedRequest<R> = [AddedMessageFor<MessagesOfRequest<R>>] extends [MessagesOfRequest<R>]
  ? R
  : R extends unknown
    ? { [K in keyof R]: K extends MessagesKey<R> ? Array<Compacted<MessagesOfRequest<R>>> : R[K] }
    : never;

// ---- Web platform types, without requiring the DOM lib or @types/node ---------------

/** The type of the global class `K` (its instances) when your environment's types declare one, else `Fallback`. */
type GlobalInstance<K extends string, Fallback> = typeof globalThis extends { readonly [P in K]: { prototype: infer T } } ? T : Fallback;

/** `AbortSignal` (structural when neither the DOM lib nor @types/node is loaded). */
export type AbortSignalLike = GlobalInstance<
  "AbortSignal",
  {
    readonly aborted: boolean;
    readonly reason: unknown;
    throwIfAborted(): void;
    addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
    removeEventListener(type: "abort", listener: () => void): void;
  }
>;
/** `ReadableStream` (structural when neither the DOM lib nor @types/node is loaded). */
export type ReadableStreamLike = GlobalInstance<
  "ReadableStream",
  { getReader(): { read(): Promise<{ done: boolean; value?: string | Uint8Array }>; releaseLock(): void } }
>;
/** `URL` (structural when neither the DOM lib nor @types/node is loaded). */
export type URLLike = GlobalInstance<"URL", { readonly href: string }>;
/** `Response` (structural when neither the DOM lib nor @types/node is loaded). */
export type ResponseLike = GlobalInstance<"Response", { readonly ok: boolean; arrayBuffer(): Promise<ArrayBuffer> }>;

// ---- Summarizer (LLM modes) ------------------------------------------------------

/** Token usage a summarizer may report; snake_case and OpenAI/Anthropic names are accepted too. */
export interface SummarizerUsage {
  inputTokens?: number;
  outputTokens?: number;
  input_tokens?: number;
  output_tokens?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
}

/**
 * What the library asks a summarizer for (structured and llm_replace modes).
 * `messages` is ready to send to the API your history is in: OpenAI and Moltis
 * histories get OpenAI Chat messages with the system message first; Anthropic
 * histories get Messages-API messages (tool_use/tool_result still paired) with
 * `system` kept apart. The last message is the final instruction (where turns
 * are merged, as for Anthropic and Gemini by default or with `alternation:
 * "merge"`, it is appended to a user message right before it).
 */
export interface SummarizerRequest<M = Message> {
  /** The mode asking. */
  mode: "structured" | "llm_replace";
  /** The system instruction (also the first message for OpenAI-like formats). */
  system: string;
  /**
   * The conversation to summarize, role-separated, then the instruction: for a
   * history of `M`s (the summarizer passed to `compact` with it), messages its
   * API takes (an SDK's own message type in, the same type out); a message of
   * any format for a `Summarizer` typed on its own (write
   * `Summarizer<ChatCompletionMessageParam>` to have the SDK's type). Those
   * from the history are copies: changing them leaves the history as it was.
   */
  messages: SummaryMessageFor<M>[];
  /** The final user instruction (the last of `messages`, or the end of it). */
  instruction: string;
  /** The newest earlier summary, when re-compacting (also quoted in `instruction`). */
  previousSummary?: string;
  /** `summaryModel` from the options: the model to summarize with. */
  model?: string;
  /** `maxSummaryTokens` from the options: the answer's token limit. */
  maxTokens: number;
  /** The request's input tokens by the library's count (it fits contextWindow − maxTokens). */
  estimatedInputTokens: number;
  /** 1, or 2 for the one retry after a summary failed the quality check. */
  attempt: number;
  /** Fires when the caller aborts, `timeoutMs` passes, or a streamed summary passes twice `maxTokens` (no longer read): hand it to fetch. */
  signal: AbortSignalLike;
}

/** A piece of a streamed summary: text, UTF-8 bytes, or the usage (usually last). */
export type SummaryChunk = string | Uint8Array | ArrayBuffer | { usage: SummarizerUsage };

/** What a summarizer may return. */
export type SummarizerResponse = string | { text: string; usage?: SummarizerUsage };

/**
 * A caller-supplied summarizer; the library never does network I/O itself. It may
 * return a string or `{text, usage}` (or a promise of either), or stream the text
 * as an async iterable or a ReadableStream (the pieces are concatenated).
 */
export type Summarizer<M = Message> = (
  request: SummarizerRequest<M>,
) =>
  | SummarizerResponse
  | Promise<SummarizerResponse>
  | AsyncIterable<SummaryChunk>
  | ReadableStreamLike
  | Promise<AsyncIterable<SummaryChunk> | ReadableStreamLike>;

// ---- Options ---------------------------------------------------------------------

/** Options; every key may also be written in snake_case (`protect_head`). */
export interface CompactionOptions<M = any> {
  /** The strategy (default `"deterministic"`). */
  mode?: ModeInput;
  /** Auto-compact trigger and tail-budget multiplier, clamped to [0.1, 0.95] (default 0.95). */
  thresholdPercent?: number;
  /** Head messages kept verbatim (default 3). */
  protectHead?: number;
  /** Minimum tail messages kept verbatim (default 20). */
  protectTailMin?: number;
  /** Tail budget = contextWindow × thresholdPercent × this, clamped to [0.05, 0.80] (default 0.20). */
  tailBudgetRatio?: number;
  /** Older tool outputs longer than this many UTF-8 bytes become placeholders (default 200). */
  toolPruneCharThreshold?: number;
  /**
   * The model's context window in tokens (input + output). Default: the window of
   * the request's `model` when it is a well-known one (see docs/api.md), else 200000.
   */
  contextWindow?: number;
  /**
   * Tokens kept free for the answer (default 0): the threshold is taken from
   * contextWindow less this. A request's `max_tokens` / `max_completion_tokens` /
   * `max_output_tokens` counts when it is larger.
   */
  reserveOutputTokens?: number;
  /** Model passed to the summarizer. */
  summaryModel?: string;
  /**
   * The summary model's window in tokens, which bounds what the summarizer reads.
   * Default: a well-known `summaryModel`'s window, else `contextWindow`.
   */
  summaryContextWindow?: number;
  /** Token limit passed to the summarizer (default 4096); a summary may be at most twice this, and a stream is not read past that. */
  maxSummaryTokens?: number;
  /** Cap on each tool output in the summarizer input, in bytes (default 50000). */
  maxToolResultBytes?: number;
  /** Add Moltis's settings hint line to the notice (default false; true for a moltis.toml). */
  showSettingsHint?: boolean;
  /** Force the message format instead of detecting it. */
  format?: Format | "auto";
  /**
   * Whether the marker, summary and stubs compaction adds join the neighbouring
   * message of the same role so that roles alternate (`"merge"`, the default for
   * `anthropic` and `gemini`), or stay messages of their own (`"keep"`, the
   * default for the other formats); `"auto"` is that default.
   */
  alternation?: Alternation | "auto";
  /**
   * Which tokenizer the estimator imitates. Default: the one a request's
   * well-known `model` implies (`claude-*` → "claude"; GPT-4 other than 4o/4.1/4.5,
   * and GPT-3.5 → "cl100k"), else "o200k".
   */
  tokenizer?: Tokenizer;
  /** `created_at` (ms) for synthesized Moltis messages; default: that of the messages they replace. */
  now?: number;
  /** Random instead of content-derived ids for synthesized messages (default false). */
  randomIds?: boolean;
  /** Unknown option keys are errors instead of warnings (default false). */
  strict?: boolean;
  /**
   * Messages kept verbatim in every mode, wherever they are (with their tool
   * calls or results): a function `(message, index) => boolean`, or the indices.
   * The function answers synchronously: a Promise is INVALID_CONFIG. System and
   * developer messages are always kept.
   */
  pin?: ((message: M, index: number) => boolean) | number[];
  /** Roles whose messages are kept verbatim in every mode ("user" keeps everything the person said). */
  pinRoles?: Array<"system" | "developer" | "user" | "assistant" | "tool">;
  /**
   * Your own exact token counter, used for every count instead of the built-in
   * estimator (never cached). It must answer synchronously: a Promise is
   * INVALID_CONFIG (use a synchronous tokenizer, or counts computed beforehand),
   * and so is an answer above 2^40 (no text has that many tokens).
   */
  countTokens?: (text: string) => number;
  /** snake_case spelling of `countTokens`. */
  count_tokens?: (text: string) => number;
  /**
   * The per-message cache (default true): each message object's encoded form and
   * estimate are kept (WeakMap) and reused while the message is unchanged (every
   * value and key compared with what was written). `measure` and
   * `estimateTokens` keep what they read; a compaction keeps a history only once
   * it has seen it (a request compacted once keeps nothing). `false` for this call.
   */
  cache?: boolean;
  /** The summarizer for the LLM modes (`structured`, `llm_replace`; with `compact` only). */
  summarize?: Summarizer<M>;
  /** Aborts an LLM-mode compaction: `compact` rejects with ABORTED (never a fallback). */
  signal?: AbortSignalLike;
  /** Time limit for all summarizer calls of one compaction together, in ms (default 120000; 0: no limit). On expiry structured falls back, llm_replace fails with LLM_FAILED. */
  timeoutMs?: number;

  /** snake_case spelling of `thresholdPercent`. */
  threshold_percent?: number;
  /** snake_case spelling of `protectHead`. */
  protect_head?: number;
  /** snake_case spelling of `protectTailMin`. */
  protect_tail_min?: number;
  /** snake_case spelling of `tailBudgetRatio`. */
  tail_budget_ratio?: number;
  /** snake_case spelling of `toolPruneCharThreshold`. */
  tool_prune_char_threshold?: number;
  /** snake_case spelling of `contextWindow`. */
  context_window?: number;
  /** snake_case spelling of `reserveOutputTokens`. */
  reserve_output_tokens?: number;
  /** snake_case spelling of `summaryModel`. */
  summary_model?: string;
  /** snake_case spelling of `summaryContextWindow`. */
  summary_context_window?: number;
  /** snake_case spelling of `maxSummaryTokens`. */
  max_summary_tokens?: number;
  /** snake_case spelling of `maxToolResultBytes`. */
  max_tool_result_bytes?: number;
  /** snake_case spelling of `showSettingsHint`. */
  show_settings_hint?: boolean;
  /** snake_case spelling of `randomIds`. */
  random_ids?: boolean;
  /** snake_case spelling of `timeoutMs`. */
  timeout_ms?: number;
  /** snake_case spelling of `pinRoles`. */
  pin_roles?: Array<"system" | "developer" | "user" | "assistant" | "tool">;
}

/** The effective options after defaults and clamping (what `parseConfig` returns). */
export interface EffectiveOptions {
  mode: Mode;
  thresholdPercent: number;
  protectHead: number;
  protectTailMin: number;
  tailBudgetRatio: number;
  toolPruneCharThreshold: number;
  summaryModel?: string;
  summaryContextWindow?: number;
  maxSummaryTokens: number;
  showSettingsHint: boolean;
  contextWindow: number;
  reserveOutputTokens: number;
  maxToolResultBytes: number;
  format?: Format;
  /** Absent when it follows the format (merge for anthropic and gemini, keep otherwise). */
  alternation?: Alternation;
  tokenizer: Tokenizer;
  now?: number;
  randomIds: boolean;
  strict: boolean;
  /** Pinned message indices (absent when none). */
  pin?: number[];
  /** Pinned roles (absent when none). */
  pinRoles?: Array<"system" | "developer" | "user" | "assistant" | "tool">;
}

// ---- Results -----------------------------------------------------------------------

/** A non-fatal remark: a clamped value, an unknown key, a summarizer input that had to shrink. */
export interface Warning {
  code:
    | "CLAMPED"
    | "READ_AS_PERCENT"
    | "NO_ROOM_FOR_INPUT"
    | "UNKNOWN_OPTION"
    | "EMPTY_MESSAGE_DROPPED"
    | "SUMMARY_INPUT_SHRUNK"
    | "SUMMARY_WINDOW_TOO_SMALL"
    | "TAIL_PRUNED"
    | "TAIL_SHORTENED"
    | "TEXTS_SHORTENED"
    | "DOES_NOT_FIT";
  message: string;
}

/** Why `structured` fell back to `recency_preserving`. */
export interface Fallback {
  /** The mode that was asked for. */
  from: Mode;
  /** Which failure: the summarizer threw, rejected or returned no text; it timed out; the summary was empty; it failed the quality check twice; or nothing new lay between head and tail (only pinned messages, UI notices or the earlier summary; or head and tail covered everything and old tool outputs were pruned in place), so no call was made. */
  code: "LLM_FAILED" | "TIMEOUT" | "EMPTY_SUMMARY" | "QUALITY_CHECK" | "NOTHING_TO_SUMMARIZE";
  /** What went wrong, in words. */
  reason: string;
}

/** What a compaction did. Show `text` to the person; never send the notice to the model. */
export interface Notice {
  /** The format the input was read as (detected, or forced with `format`). */
  format: Format;
  /** The mode whose output this is. */
  mode: Mode;
  /** The mode that was asked for. */
  requestedMode: Mode;
  /** Set when structured fell back to recency_preserving. */
  fallback?: Fallback;
  /** Messages of the input: the messages this result covers (what `rebase` relies on). */
  messagesBefore: number;
  messagesAfter: number;
  /** Estimated tokens of the input (system prompt held apart and tool definitions included). */
  tokensBefore: number;
  /** Estimated tokens of the output. */
  tokensAfter: number;
  /**
   * Whether the output stays under contextWindow × thresholdPercent (so it fits,
   * with room for the next turn); when not, a DOES_NOT_FIT warning gives the numbers.
   */
  fits: boolean;
  /** Summarizer input tokens (0 for offline modes); retries add up. */
  compactionInputTokens: number;
  /** Summarizer output tokens. */
  compactionOutputTokens: number;
  compactionTotalTokens: number;
  /** Set when the summarizer reported no usage and the counts are estimates. */
  usageEstimated?: true;
  /** The settings hint, when `showSettingsHint` is on. */
  settingsHint?: string;
  /** The human notice, e.g. "🧹 Conversation compacted\nMode: Recency preserving\n…". */
  text: string;
  /** The options in effect (clamped; the window chosen for the request's model; the answer's room). */
  options: EffectiveOptions;
}

/**
 * The result of a compaction. `M` is the type of the compacted messages (see
 * `Compacted`), `R` that of `request` (see `CompactedRequest`).
 */
export interface CompactionResult<M = Message, R = undefined> {
  /** The compacted messages, in the input's format. */
  messages: M[];
  /** The input request object with only its messages (`messages`, `input` or `contents`) replaced (request input only). */
  request: R;
  notice: Notice;
  /** The summary text, for modes that write one. */
  summary?: string;
  warnings: Warning[];
}

/** Stable error codes. */
export type ErrorCode =
  | "INVALID_INPUT"
  | "INVALID_CONFIG"
  | "EMPTY_HISTORY"
  | "TOO_SMALL_TO_COMPACT"
  | "SUMMARIZER_REQUIRED"
  | "LLM_FAILED"
  | "EMPTY_SUMMARY"
  | "ABORTED"
  | "STALE_HISTORY"
  /** `chat-compaction/init` only: an API call before `initialize` / `initializeSync`. */
  | "NOT_INITIALIZED";

/** Every error the library throws. */
export declare class CompactionError extends Error {
  readonly name: "CompactionError";
  /** Stable code. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown });
}

// ---- Functions ---------------------------------------------------------------------

/**
 * Compacts a message array synchronously with an offline mode (`deterministic`,
 * `recency_preserving`); the LLM modes need `compact`. Never mutates the input.
 * The messages keep your type (see `Compacted`).
 */
export declare function compactSync<M extends MessageLike>(
  history: readonly M[],
  options?: CompactionOptions<M>,
): CompactionResult<Compacted<M>>;
/**
 * Compacts a request object; `request` is the same object with only its messages
 * (`messages`, `input` or `contents`) replaced, of your request type (see
 * `CompactedRequest`): it goes back into the SDK call as it is.
 */
export declare function compactSync<R extends HistoryRequestLike>(
  history: R,
  options?: CompactionOptions<MessagesOfRequest<R>>,
): CompactionResult<Compacted<MessagesOfRequest<R>>, CompactedRequest<R>>;

/**
 * Compacts with any mode. `structured` and `llm_replace` call `options.summarize`;
 * `structured` falls back to `recency_preserving` when no usable summary comes back
 * (see `notice.fallback`); `llm_replace` rejects with LLM_FAILED or EMPTY_SUMMARY;
 * an abort through `options.signal` rejects with ABORTED. The result covers the
 * messages the history held when the call started (see `rebase`).
 */
export declare function compact<M extends MessageLike>(
  history: readonly M[],
  options?: CompactionOptions<M>,
): Promise<CompactionResult<Compacted<M>>>;
export declare function compact<R extends HistoryRequestLike>(
  history: R,
  options?: CompactionOptions<MessagesOfRequest<R>>,
): Promise<CompactionResult<Compacted<MessagesOfRequest<R>>, CompactedRequest<R>>>;

/**
 * The compacted history followed by the messages `currentHistory` gained since the
 * compaction started (a summary takes seconds while the person keeps chatting). A
 * message the result keeps verbatim is taken as it is now (a reply still streaming
 * into the last message). Throws STALE_HISTORY, changing nothing, when a message the
 * summary or marker covers was edited (the same content with its keys in another
 * order is not an edit), when messages were removed, or when a tool result answers
 * a call that was compacted away. `result` must be the object `compact` or
 * `compactSync` returned.
 */
export declare function rebase<M extends MessageLike>(result: CompactionResult<unknown, unknown>, currentHistory: readonly M[]): Array<Compacted<M>>;
export declare function rebase<R extends HistoryRequestLike>(result: CompactionResult<unknown, unknown>, currentHistory: R): CompactedRequest<R>;

/**
 * For callers that already hold the history as JSON text: compacts it and returns the
 * result (`{messages, notice, warnings, summary?, request?}`) as JSON text. Read and
 * written in wasm: kept messages, and a request's other fields, are the input's bytes.
 */
export declare function compactJsonString(json: string, options?: CompactionOptions): string;

/** A request body (or a history) as JSON: text, or its UTF-8 bytes. */
export type JsonBody = string | Uint8Array | ArrayBuffer;

/** What `compactBody` answers. */
export interface BodyResult<B extends JsonBody> {
  /**
   * The caller's own input when nothing was compacted; else the compacted JSON (a
   * string for a string input, else a Uint8Array) in which every kept message and
   * every other field are the input's bytes.
   */
  body: B | (B extends string ? string : Uint8Array);
  /** Whether the messages were compacted. */
  compacted: boolean;
  /** The input's meter, which decided. */
  meter: Meter;
  /** What the compaction did (when compacted). */
  notice?: Notice;
  /** The summary text, for modes that write one. */
  summary?: string;
  warnings: Warning[];
}

/**
 * Decides and compacts a request (or history) held as JSON text or bytes in one
 * call, without JS objects of it: over the auto-compact threshold (or always,
 * with `force: true`) its messages are compacted with an offline mode; under it,
 * `body` is the caller's input, untouched. Bad bytes are INVALID_INPUT naming the
 * byte, line and column. What a Cloudflare Worker or a server holding a body wants.
 */
export declare function compactBody<B extends JsonBody>(body: B, options?: CompactionOptions & { force?: boolean }): BodyResult<B>;

/** The context meter of a request (or history) held as JSON text or bytes, read in wasm in one pass. */
export declare function measureBody(body: JsonBody, options?: CompactionOptions): Meter;

/** Estimated tokens of a text, or of a whole history (framing included). */
export declare function estimateTokens<H extends string | HistoryLike>(input: H, options?: CompactionOptions): number;

/** Where the context window in effect came from. */
export type WindowSource = "option" | "model" | "default";

/** The context meter (`measure`): how full the next request is, message by message. */
export interface Meter {
  /** The format the history was read as. */
  format: Format;
  /** Estimated input tokens of the next request: messages, system prompt held apart, tool definitions, pending text. */
  tokens: number;
  /** The context window in effect (the option, else the request's well-known `model`, else 200000). */
  contextWindow: number;
  windowSource: WindowSource;
  /** Tokens kept free for the answer: `reserveOutputTokens`, or the request's `max_tokens` (…) when larger. */
  reservedOutputTokens: number;
  /** The auto-compact threshold: round((contextWindow − reservedOutputTokens) × thresholdPercent). */
  threshold: number;
  /** tokens / contextWindow (above 1 the request overflows the window). */
  fraction: number;
  /** tokens ≥ threshold. */
  shouldCompact: boolean;
  /** Whether the count starts from provider-reported usage on the last assistant turn. */
  reported: boolean;
  /** Tokens of the system prompt held outside the messages (Anthropic `system`, Gemini `systemInstruction`, …). */
  systemTokens: number;
  /** Tokens of the request's tool definitions (`tools`, `functions`). */
  toolsTokens: number;
  /** Tokens of `pendingText`, framing included. */
  pendingTokens: number;
  /** Each message's estimated tokens, in input order (0 for UI-only notices and messages behind a provider compaction). */
  perMessage: number[];
  /** The options in effect for this history. */
  options: EffectiveOptions;
  warnings: Warning[];
}

/**
 * The context meter: the next request's estimated tokens against the window and
 * the threshold, with each message's tokens. Synchronous, no network.
 */
export declare function measure<H extends HistoryLike>(history: H, options?: CompactionOptions, pendingText?: string): Meter;

/**
 * Decides and compacts in one read of the history (offline modes): over the
 * auto-compact threshold `result` is what `compactSync` answers; under it nothing
 * is compacted. One pass, as a first compaction costs: no `measure` before and
 * none after (`result.notice.tokensAfter` counts the compacted history).
 */
export declare function compactIfNeeded<M extends MessageLike>(
  history: readonly M[],
  options?: CompactionOptions<M>,
  pendingText?: string,
): { compacted: boolean; meter: Meter; result?: CompactionResult<Compacted<M>> };
export declare function compactIfNeeded<R extends HistoryRequestLike>(
  history: R,
  options?: CompactionOptions<MessagesOfRequest<R>>,
  pendingText?: string,
): { compacted: boolean; meter: Meter; result?: CompactionResult<Compacted<MessagesOfRequest<R>>, CompactedRequest<R>> };

/** Whether the next request (history + pending text) reaches the auto-compact threshold (`measure(…).shouldCompact`). */
export declare function shouldCompact<H extends HistoryLike>(history: H, options?: CompactionOptions, pendingText?: string): boolean;

/** The backend a history is checked for, when it adds rules of its own to the format's. */
export type Provider = "openai" | "anthropic" | "gemini" | "bedrock";

/** What `validate` checks a history against (the options of a compaction may come along: they are left aside). */
export interface ValidateOptions {
  /** Force the message format instead of detecting it. */
  format?: Format | "auto";
  /** The per-message cache, as for the other calls (default true). */
  cache?: boolean;
  /**
   * The provider's own rules on top of the format's (default: `anthropic` for
   * Anthropic histories, `gemini` for Gemini, `openai` otherwise; `bedrock` is
   * Anthropic's rules plus strict alternation).
   */
  provider?: Provider;
  /** user and assistant messages must alternate (ROLES_NOT_ALTERNATING); default false. */
  strictAlternation?: boolean;
  /** snake_case spelling of `strictAlternation`. */
  strict_alternation?: boolean;
}

/** Stable codes of the rules `validate` checks. */
export type ViolationCode =
  /** A tool result that answers no call (of the turn right before it). */
  | "ORPHAN_RESULT"
  /** A call answered twice. */
  | "DUPLICATE_RESULT"
  /** Anthropic: tool_result blocks after other content in their message. */
  | "RESULT_AFTER_TEXT"
  /** A call without its result (in a request, also the newest calls). */
  | "MISSING_RESULT"
  /** AI SDK UI: a tool part without output in a message before the newest. */
  | "INCOMPLETE_TOOL_PART"
  /** The first message after the system prompt is not a user message. */
  | "FIRST_NOT_USER"
  /** A system message after the conversation started (providers that take it only first). */
  | "SYSTEM_IN_MIDDLE"
  /** Gemini: a model turn with calls that does not follow a user or functionResponse turn. */
  | "CALL_TURN_POSITION"
  /** Gemini: a request that ends on a model turn. */
  | "ENDS_ON_MODEL"
  /** OpenAI Responses: a reasoning item not followed by the item it produced. */
  | "REASONING_WITHOUT_FOLLOWER"
  /** A message with no content. */
  | "EMPTY_MESSAGE"
  /** Two user or two assistant messages in a row (with `strictAlternation` or `bedrock`). */
  | "ROLES_NOT_ALTERNATING";

/** One broken rule. */
export interface Violation {
  /** The index of the message (item, content) where the rule breaks. */
  index: number;
  code: ViolationCode;
  /** A sentence naming the message, e.g. "messages[14]: tool_use toolu_01 (read) has no tool_result in the next user message". */
  message: string;
}

/** What `validate` found. */
export interface Validation {
  /** The format the history was read as (detected, or forced with `format`). */
  format: Format;
  /** Every broken rule, in message order; empty when the history is valid. */
  violations: Violation[];
}

/**
 * Checks a history against the pairing and ordering rules its provider enforces
 * with a 400. A request object is about to be sent, so its newest calls must be
 * answered (and a Gemini request must not end on a model turn); in a bare array
 * the calls of the last turn may still be running. Throws INVALID_INPUT for a
 * history that cannot be read, INVALID_CONFIG for bad options.
 */
export declare function validate<H extends HistoryLike>(history: H, options?: ValidateOptions & Omit<CompactionOptions, keyof ValidateOptions>): Validation;

/**
 * Effective options and warnings from TOML (`[chat.compaction]` of a moltis.toml, or
 * a bare table). Async: the TOML reader (a separate module) loads on the first call.
 */
export declare function parseConfig(toml: string): Promise<{
  /**
   * The options in effect; `contextWindow` and `tokenizer` only when the table
   * set them (else a request's model, or the default, chooses).
   */
  options: Omit<EffectiveOptions, "contextWindow" | "tokenizer"> & { contextWindow?: number; tokenizer?: Tokenizer };
  warnings: Warning[];
  /** Whether the table set `context_window` (when not, a request's model may choose the window). */
  contextWindowGiven: boolean;
  /** Whether the table set `tokenizer` (when not, a request's model may choose it). */
  tokenizerGiven: boolean;
}>;
