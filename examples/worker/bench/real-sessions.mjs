// Writes bench/real-requests.json: Anthropic requests of about 200K and 800K
// tokens built from the real Claude Code sessions of ../../../shared/corpus
// (test-only data: never committed, never shipped), for `npm run bench:real`.
// Sessions are appended one after another until the estimate passes the size.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import { estimateTokens } from "chat-compaction";

// (CORPUS_DIR: the corpus elsewhere, e.g. when the example is copied out of the repository)
const corpus = process.env.CORPUS_DIR ? pathToFileURL(`${process.env.CORPUS_DIR}/`) : new URL("../../../../shared/corpus/", import.meta.url);
if (!existsSync(corpus)) {
  console.error(`no corpus at ${corpus.pathname}: the real-session bench needs it`);
  process.exit(1);
}
const sessions = [];
for (const id of ["c1f62324", "5558c6aa", "8c0be6e5"]) sessions.push(JSON.parse(readFileSync(new URL(`swecontext-${id}.anthropic.json`, corpus), "utf8")).messages);
for (const line of gunzipSync(readFileSync(new URL("swecontext-more.jsonl.gz", corpus))).toString("utf8").split("\n")) {
  if (line.trim() === "") continue;
  const { format, input } = JSON.parse(line);
  if (format === "anthropic") sessions.push(input.messages);
}
const SYSTEM = "You are Claude Code, an agent that fixes issues in a repository with its tools.";
function request(tokens) {
  const messages = [];
  for (let k = 0; estimateTokens({ system: SYSTEM, messages }, { tokenizer: "claude" }) < tokens; k++) messages.push(...sessions[k % sessions.length]);
  return { model: "claude-sonnet-4-5", max_tokens: 8192, system: SYSTEM, messages };
}
const out = { "200K": request(200_000), "800K": request(800_000) };
writeFileSync(new URL("real-requests.json", import.meta.url), JSON.stringify(out));
for (const [k, r] of Object.entries(out)) console.log(`${k}: ${r.messages.length} messages, ${(JSON.stringify(r).length / 1e6).toFixed(2)} MB`);
