#!/usr/bin/env node
// chat-compaction CLI: compact a history file, estimate its tokens, or check it against the provider rules.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { compactSync, estimateTokens, parseConfig, shouldCompact, validate } from "../node.js";

const usage = `usage:
  chat-compaction compact [--mode MODE] [--context-window N] [--format FORMAT] [--config moltis.toml] [--out FILE] FILE
  chat-compaction estimate [--tokenizer o200k|cl100k|claude] FILE
  chat-compaction check [--context-window N] FILE      (exit 0 when compaction is due, 3 when not)
  chat-compaction validate [--format FORMAT] [--provider openai|anthropic|gemini|bedrock] [--strict-alternation] FILE
                                                        (one line per violation; exit 0 when valid, 1 when not)
FILE is JSON (a message array or a request object) or JSON Lines (one message a line), or - for
standard input. FORMAT: openai, anthropic, moltis, openai-responses, ai-sdk, ai-sdk-ui, gemini
(detected when left out). The compacted history goes to standard output (or --out); the notice
goes to standard error.`;

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
      provider: { type: "string" },
      "strict-alternation": { type: "boolean" },
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
const validateOnly = ["provider", "strict-alternation"].filter((k) => values[k] !== undefined);
const compactOnly = ["mode", "context-window", "tokenizer", "config", "out"].filter((k) => values[k] !== undefined);
if (command !== "validate" && validateOnly.length > 0) fail(`--${validateOnly[0]} is an option of validate\n${usage}`, 2);
if (command === "validate" && compactOnly.length > 0) fail(`validate takes --format, --provider and --strict-alternation, not --${compactOnly[0]}\n${usage}`, 2);

/** The history in FILE: JSON, or JSON Lines (a `.jsonl` file, or text that is not one JSON value). */
function readHistory() {
  const text = readFileSync(file === "-" ? 0 : file, "utf8");
  const name = file === "-" ? "standard input" : file;
  let notJson;
  if (!file.endsWith(".jsonl")) {
    try {
      return JSON.parse(text);
    } catch (e) {
      if (text.trim().split("\n").length < 2) throw new Error(`${name} is not JSON: ${e.message}`);
      notJson = e.message;
    }
  }
  return text.split("\n").flatMap((line, i) => {
    if (line.trim() === "") return [];
    try {
      return [JSON.parse(line)];
    } catch (e) {
      const json = notJson === undefined ? "" : `not JSON (${notJson}), and `;
      throw new Error(`${name} is ${json}not JSON Lines: line ${i + 1}: ${e.message}`);
    }
  });
}

/** The messages of a history: the array, or the first of `messages`, `input`, `contents` of a request. */
function messagesOf(history) {
  if (Array.isArray(history)) return history;
  const key = ["messages", "input", "contents"].find((k) => history?.[k] !== undefined);
  return Array.isArray(history?.[key]) ? history[key] : [];
}

try {
  const history = readHistory();
  if (command === "validate") {
    const options = {};
    if (values.format) options.format = values.format;
    if (values.provider) options.provider = values.provider;
    if (values["strict-alternation"]) options.strictAlternation = true;
    const { format, violations } = validate(history, options);
    const n = messagesOf(history).length;
    const about = `${format}, ${n} message${n === 1 ? "" : "s"}`;
    if (violations.length === 0) {
      process.stdout.write(`valid (${about})\n`);
    } else {
      for (const v of violations) {
        const place = `messages[${v.index}]`;
        const text = v.message.startsWith(`${place}: `) ? v.message.slice(place.length + 2) : v.message;
        process.stdout.write(`${place} ${v.code}: ${text}\n`);
      }
      process.stderr.write(`invalid (${about}): ${violations.length} violation${violations.length === 1 ? "" : "s"}\n`);
      process.exitCode = 1;
    }
  } else {
    compactCommand(history);
  }
} catch (e) {
  fail(e.code ? `error ${e.code}: ${e.message}` : `error: ${e.message}`);
}

/** compact, estimate and check. */
function compactCommand(history) {
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
}
