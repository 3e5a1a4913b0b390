import { readFileSync } from "node:fs";
import { compactSync, shouldCompact } from "chat-compaction";

let history = JSON.parse(readFileSync("conversation.json", "utf8")); // OpenAI, Anthropic or Moltis messages
if (shouldCompact(history, { contextWindow: 8000 })) {
  const { messages, notice } = compactSync(history, { mode: "recency_preserving", contextWindow: 8000 });
  console.log(notice.text); // 🧹 Conversation compacted …
  console.log(`${notice.tokensBefore} → ${notice.tokensAfter} tokens`);
  history = messages; // same format as the input; every tool call still has its result
}
