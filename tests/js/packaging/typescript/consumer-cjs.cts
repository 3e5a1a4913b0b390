// A CommonJS TypeScript consumer (TypeScript ≥ 5.8 models Node's require() of ES modules).
import chat = require("chat-compaction");

const r = chat.compactSync([{ role: "user", content: "hi" }], { mode: "deterministic" });
const text: string = r.notice.text;
export = text;
