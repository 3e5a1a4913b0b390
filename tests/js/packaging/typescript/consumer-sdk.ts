// The official SDKs' own types go in and come back out without a cast: message
// arrays keep their type, request objects go back into the same SDK call. The SDKs
// are devDependencies of this fixture (exact versions); nothing here runs.
import OpenAI from "openai";
import type {
  ChatCompletionCreateParams,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { ResponseCreateParamsNonStreaming, ResponseInputItem } from "openai/resources/responses/responses";
import Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParams, MessageCreateParamsNonStreaming, MessageCreateParamsStreaming, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { generateText, streamText, type LanguageModel, type ModelMessage, type UIMessage } from "ai";
import { GoogleGenAI, type Content, type GenerateContentParameters } from "@google/genai";
import {
  compact,
  compactSync,
  estimateTokens,
  measure,
  rebase,
  shouldCompact,
  validate,
  type AddedMessageFor,
  type CompactionResult,
  type GeminiAddedText,
  type OpenAIAddedText,
  type OpenAIAddedStub,
  type Summarizer,
} from "chat-compaction";

declare const openai: OpenAI;
declare const anthropic: Anthropic;
declare const google: GoogleGenAI;
declare const model: LanguageModel;

// ---- openai: Chat Completions --------------------------------------------------------

declare const chat: ChatCompletionMessageParam[];
const chatResult: CompactionResult<ChatCompletionMessageParam> = compactSync(chat, { mode: "recency_preserving" });
const chatBack: ChatCompletionMessageParam[] = chatResult.messages;

declare const chatParams: ChatCompletionCreateParamsNonStreaming;
declare const chatStreamParams: ChatCompletionCreateParamsStreaming;
declare const chatAnyParams: ChatCompletionCreateParams;
async function openaiChat(): Promise<void> {
  const r = compactSync(chatParams, { contextWindow: 128000 });
  const completion: OpenAI.Chat.ChatCompletion = await openai.chat.completions.create(r.request);
  const s = await compact(chatStreamParams, { mode: "deterministic" });
  for await (const chunk of await openai.chat.completions.create(s.request)) void chunk.choices;
  const either: ChatCompletionCreateParams = compactSync(chatAnyParams).request;
  await openai.chat.completions.create(either);
  const messages: ChatCompletionMessageParam[] = r.request.messages;
  // A message array sent with the request's other fields.
  await openai.chat.completions.create({ ...chatParams, messages: compactSync(chatParams.messages).messages });
  void completion;
  void messages;
}

// ---- openai: Responses ---------------------------------------------------------------

declare const responsesParams: ResponseCreateParamsNonStreaming;
declare const responseItems: ResponseInputItem[];
async function openaiResponses(): Promise<void> {
  const r = compactSync(responsesParams);
  await openai.responses.create(r.request);
  const items: ResponseInputItem[] = compactSync(responseItems).messages;
  void items;
}

// A summarizer hands request.messages to the SDK the history came from, as it is.
async function summarizers(): Promise<void> {
  await compact(chat, {
    mode: "structured",
    summarize: async (request) =>
      (await openai.chat.completions.create({ model: "gpt-4o-mini", messages: request.messages })).choices[0]?.message.content ?? "",
  });
  await compact(anthropicParams, {
    mode: "llm_replace",
    summarize: async (request) => {
      const r = await anthropic.messages.create({ model: "claude-haiku-4-5", system: request.system, messages: request.messages, max_tokens: request.maxTokens });
      return r.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    },
  });
  // Typed on its own: the SDK's message type names what comes in.
  const toOpenAI: Summarizer<ChatCompletionMessageParam> = async (request) =>
    (await openai.chat.completions.create({ model: "gpt-4o-mini", messages: request.messages })).choices[0]?.message.content ?? "";
  await compact(chatParams, { mode: "structured", summarize: toOpenAI });
}
void summarizers;

// ---- @anthropic-ai/sdk ----------------------------------------------------------------

declare const anthropicHistory: MessageParam[];
declare const anthropicParams: MessageCreateParamsNonStreaming;
declare const anthropicStreamParams: MessageCreateParamsStreaming;
declare const anthropicAnyParams: MessageCreateParams;
async function anthropicUse(): Promise<void> {
  const back: MessageParam[] = compactSync(anthropicHistory, { alternation: "merge" }).messages;
  const r = await compact(anthropicParams, { mode: "recency_preserving" });
  const message: Anthropic.Message = await anthropic.messages.create(r.request);
  const stream = await anthropic.messages.create(compactSync(anthropicStreamParams).request);
  for await (const event of stream) void event.type;
  await anthropic.messages.create(compactSync(anthropicAnyParams).request);
  const rebased: MessageCreateParamsNonStreaming = rebase(r, anthropicParams);
  void back;
  void message;
  void rebased;
}

// ---- ai (Vercel AI SDK) ------------------------------------------------------------------

declare const modelMessages: ModelMessage[];
declare const uiMessages: UIMessage[];
async function aiSdkUse(): Promise<void> {
  const r = compactSync(modelMessages, { format: "ai-sdk" });
  await generateText({ model, messages: r.messages });
  streamText({ model, messages: (await compact(modelMessages)).messages });
  const ui: UIMessage[] = compactSync(uiMessages, { format: "ai-sdk-ui" }).messages;
  const uiRebased: UIMessage[] = rebase(compactSync(uiMessages), [...uiMessages]);
  void ui;
  void uiRebased;
}

// ---- @google/genai ----------------------------------------------------------------------

declare const contents: Content[];
declare const geminiParams: GenerateContentParameters;
async function geminiUse(): Promise<void> {
  const back: Content[] = compactSync(contents, { format: "gemini" }).messages;
  const r = compactSync(geminiParams);
  await google.models.generateContent(r.request);
  await google.models.generateContentStream((await compact(geminiParams)).request);
  const added: GeminiAddedText = { role: "user", parts: [{ text: "x" }] };
  const fits: Content = added;
  void back;
  void fits;
}

// ---- Your own message type ------------------------------------------------------------

interface ChatMsg {
  id: string;
  role: "user" | "assistant";
  content: string;
  createdAt: number;
}
declare const own: ChatMsg[];
const ownResult = compactSync(own, { pin: (m, i) => m.createdAt > 0 && i >= 0 });
// Kept messages are yours; the marker and summary are `{role: "user", content}` without an id.
const ownMessages: Array<ChatMsg | OpenAIAddedText | OpenAIAddedStub> = ownResult.messages;
const ids: Array<string | undefined> = ownResult.messages.map((m) => ("id" in m ? m.id : undefined));
const ownAdded: AddedMessageFor<ChatMsg> = { role: "user", content: "[compacted]" };
const ownRebased = rebase(ownResult, [...own, { id: "n", role: "user", content: "more", createdAt: 1 }]);
const readonlyOwn: readonly ChatMsg[] = own;
compactSync(readonlyOwn);

// Every reading function takes the same types.
const meters = [measure(chat), measure(chatParams), measure(anthropicParams), measure(contents), measure(geminiParams), measure(own), measure(uiMessages)];
const counts: number =
  estimateTokens(chat) + estimateTokens(anthropicHistory) + estimateTokens(modelMessages) + estimateTokens(own) + estimateTokens(geminiParams) + estimateTokens(responsesParams);
const due: boolean = shouldCompact(anthropicParams, { contextWindow: 200000 }, "next question") || shouldCompact(own);
const valid = [validate(chat), validate(anthropicParams, { provider: "bedrock" }), validate(modelMessages), validate(uiMessages), validate(contents), validate(own)];

// ---- Still rejected ----------------------------------------------------------------------

// @ts-expect-error a kept ChatMsg array is not only ChatMsgs: added messages have no id
const notOnlyOwn: ChatMsg[] = ownResult.messages;
// @ts-expect-error "fast" is not a mode
compactSync(chat, { mode: "fast" });
// @ts-expect-error contextWindow is a number
compactSync(anthropicParams, { contextWindow: "200k" });
// @ts-expect-error alternation is "keep" or "merge"
compactSync(contents, { alternation: "always" });
// @ts-expect-error pin's message is a ChatMsg, which has no `parts`
compactSync(own, { pin: (m) => m.parts.length > 0 });
// @ts-expect-error a provider validate does not know
validate(modelMessages, { provider: "mistral" });
// @ts-expect-error numbers are not messages
compactSync([1, 2, 3]);
// @ts-expect-error an object without messages, input or contents is not a history
measure({ model: "gpt-4o" });
// @ts-expect-error the compacted Anthropic request is not an OpenAI request
openai.chat.completions.create(compactSync(anthropicParams).request);

export { chatBack, openaiChat, openaiResponses, anthropicUse, aiSdkUse, geminiUse, ownMessages, ids, ownAdded, ownRebased, meters, counts, due, valid, notOnlyOwn };
