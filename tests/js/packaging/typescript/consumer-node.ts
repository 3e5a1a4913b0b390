// A Node-only TypeScript consumer: @types/node, no DOM lib (tsconfig.node.json is
// written at test time, pointing typeRoots at the repository's @types).
import { compactSync, compact, CompactionError, type CompactionOptions } from "chat-compaction";

const controller = new AbortController();
const options: CompactionOptions = { mode: "recency_preserving", contextWindow: 8000, signal: controller.signal };
const r = compactSync([{ role: "user", content: "hi" }], options);
const text: string = r.notice.text;
const later: Promise<number> = compact([{ role: "user", content: "hi" }]).then((x) => x.messages.length);
const isError: Error = new CompactionError("EMPTY_HISTORY", "x");
export { text, later, isError };
