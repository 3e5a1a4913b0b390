// A consumer with neither the DOM lib nor @types/node (lib es2022, no types): the
// package's .d.ts files must compile on their own, AbortSignal, ReadableStream, URL
// and Response included. Message and request types are plain interfaces (no index
// signature), as an SDK or a user writes them.
import { compact, compactSync, measure, rebase, validate, type CompactionResult, type Summarizer } from "chat-compaction";
import { initialize, initializeSync, type WasmSource } from "chat-compaction/init";

interface ChatMsg {
  id: string;
  role: "user" | "assistant";
  content: string;
  createdAt: number;
}
interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}
type SdkMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content?: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };
interface SdkRequest {
  model: string;
  messages: SdkMessage[];
  max_tokens?: number;
}

declare const own: ChatMsg[];
declare const request: SdkRequest;

const summarize: Summarizer = async (req) => (req.signal.aborted ? "" : `summary of ${req.messages.length} messages`);

async function use(): Promise<SdkRequest> {
  const r = compactSync(own, { mode: "recency_preserving" });
  const first: string | undefined = r.messages.find((m): m is ChatMsg => "id" in m)?.id;
  // Added messages carry an `id` when the history's messages do: every member has one to read.
  const ids: (string | undefined)[] = r.messages.map((m) => m.id);
  void ids;
  const sent: SdkRequest = (await compact(request, { mode: "structured", summarize })).request;
  const next: SdkRequest = rebase(compactSync(request), request);
  const sdkResult: CompactionResult<SdkMessage> = compactSync(request.messages);
  void first;
  void sdkResult;
  return measure(own).shouldCompact && validate(request).violations.length === 0 ? sent : next;
}

async function init(bytes: Uint8Array, source: WasmSource): Promise<void> {
  initializeSync(bytes);
  await initialize(source);
  await initialize("https://example.invalid/chat_compaction_bg.wasm");
}

// @ts-expect-error a summarizer returns text, not a number
compact(own, { mode: "structured", summarize: () => 42 });
// @ts-expect-error the signal is an AbortSignal, not a string
compact(own, { signal: "abort" });
// @ts-expect-error a request of ChatMsgs comes back with added messages, which have no id
const onlyOwn: { messages: ChatMsg[] } = compactSync({ messages: own }).request;

export { use, init, onlyOwn };
