#!/usr/bin/env node
// chat-compaction CLI: compact a history file, or estimate its tokens.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { compactSync, estimateTokens, parseConfig, shouldCompact } from "../node.js";

const usage = `usage:
  chat-compaction compact [--mode MODE] [--context-window N] [--format FORMAT] [--config moltis.toml] [--out FILE] FILE
  chat-compaction estimate [--tokenizer o200k|cl100k|claude] FILE
  chat-compaction check [--context-window N] FILE      (exit 0 when compaction is due, 3 when not)
FILE may be - for standard input. The compacted history goes to standard output (or --out);
the notice goes to standard error.`;

function fail(message, code = 1) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      mode: { type: "string" },
      "context-window": { type: "string" },
      format: { type: "string" },
      tokenizer: { type: "string" },
      config: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
} catch (e) {
  fail(`${e.message}\n${usage}`, 2);
}
const { values, positionals } = parsed;
const [command, file] = positionals;
if (values.help || !command) fail(usage, values.help ? 0 : 2);
if (!file) fail(`missing FILE\n${usage}`, 2);

try {
  const history = JSON.parse(readFileSync(file === "-" ? 0 : file, "utf8"));
  const options = values.config ? { ...parseConfig(readFileSync(values.config, "utf8")).options } : {};
  if (values.mode) options.mode = values.mode;
  if (values.format) options.format = values.format;
  if (values.tokenizer) options.tokenizer = values.tokenizer;
  if (values["context-window"]) options.contextWindow = Number(values["context-window"]);
  if (command === "compact") {
    const result = compactSync(history, options);
    const output = JSON.stringify(result.request ?? result.messages, null, 2) + "\n";
    if (values.out) writeFileSync(values.out, output);
    else process.stdout.write(output);
    const { notice } = result;
    process.stderr.write(`${notice.text}\nmessages: ${notice.messagesBefore} → ${notice.messagesAfter}; tokens: ${notice.tokensBefore} → ${notice.tokensAfter}\n`);
    for (const w of result.warnings) process.stderr.write(`warning ${w.code}: ${w.message}\n`);
  } else if (command === "estimate") {
    process.stdout.write(`${estimateTokens(history, options)}\n`);
  } else if (command === "check") {
    process.exit(shouldCompact(history, options) ? 0 : 3);
  } else {
    fail(`unknown command ${JSON.stringify(command)}\n${usage}`, 2);
  }
} catch (e) {
  fail(e.code ? `error ${e.code}: ${e.message}` : `error: ${e.message}`);
}
