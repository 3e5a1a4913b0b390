#!/usr/bin/env node
// chat-compaction CLI: compact a history file (offline, or with an LLM through an
// OpenAI-compatible or Anthropic endpoint), measure it, check it, or validate it.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { compact, estimateTokens, measure, parseConfig, validate, CompactionError } from "../node.js";
import { anthropicSummarizer, openAISummarizer } from "./summarizers.js";

const usage = `usage:
  chat-compaction compact [OPTIONS] [--out FILE] FILE
  chat-compaction compact --mode structured|llm_replace --endpoint URL --model MODEL [OPTIONS] FILE
  chat-compaction measure [OPTIONS] FILE     (the context meter: totals, then the heaviest messages)
  chat-compaction check [OPTIONS] FILE       (prints the verdict; exit 0 when compaction is due, 3 when not)
  chat-compaction estimate [--tokenizer o200k|cl100k|claude] FILE
  chat-compaction validate [--format FORMAT] [--provider openai|anthropic|gemini|bedrock] [--strict-alternation] FILE
                                                        (one line per violation; exit 0 when valid, 1 when not)
  chat-compaction help | --version

OPTIONS (docs/options.md has each one's meaning):
  --mode MODE                 deterministic (default), recency_preserving, structured, llm_replace
  --config moltis.toml        the [chat.compaction] table of a moltis.toml (flags override it)
  --format FORMAT             openai, anthropic, moltis, openai-responses, ai-sdk, ai-sdk-ui, gemini
  --context-window N          --reserve-output-tokens N    --threshold P (0.1–0.95)
  --protect-head N            --protect-tail-min N         --tail-budget-ratio R (0.05–0.80)
  --tool-prune-bytes N        --max-tool-result-bytes N    --max-summary-tokens N
  --alternation merge|keep|auto   --tokenizer o200k|cl100k|claude   --pin-roles ROLE[,ROLE]
  --strict                    unknown options in --config are errors
LLM modes:
  --endpoint URL              base URL of the API (https://api.openai.com/v1, http://localhost:11434/v1,
                              https://api.anthropic.com …; a trailing /v1 is fine for Anthropic too)
  --model MODEL               the summary model
  --api openai|anthropic      the endpoint's API (default: anthropic for Anthropic histories, else openai)
  --summary-context-window N  the summary model's window (default: a known --model's, else --context-window)
  --timeout-ms N              limit for all summarizer calls together (default 120000; 0: none)
  The API key is read from CHAT_COMPACTION_API_KEY (never a flag). The summary streams to
  standard error as it arrives, and stops past twice --max-summary-tokens; a failed structured
  summary falls back to recency_preserving.

FILE is JSON (a message array or a request object) or JSON Lines (one message a line), or - for
standard input. The compacted history goes to standard output (or --out); the notice goes to
standard error. Exit status: 0 done, 1 error (the message names the file and the place), 2 usage,
3 not yet (check).`;

/** Flags that set an option: flag → [option key, kind]. */
const OPTION_FLAGS = {
  mode: ["mode", "string"],
  format: ["format", "string"],
  "context-window": ["contextWindow", "integer"],
  "reserve-output-tokens": ["reserveOutputTokens", "integer"],
  threshold: ["thresholdPercent", "number"],
  "protect-head": ["protectHead", "integer"],
  "protect-tail-min": ["protectTailMin", "integer"],
  "tail-budget-ratio": ["tailBudgetRatio", "number"],
  "tool-prune-bytes": ["toolPruneCharThreshold", "integer"],
  "max-tool-result-bytes": ["maxToolResultBytes", "integer"],
  "max-summary-tokens": ["maxSummaryTokens", "integer"],
  alternation: ["alternation", "string"],
  tokenizer: ["tokenizer", "string"],
  "pin-roles": ["pinRoles", "list"],
  model: ["summaryModel", "string"],
  "summary-context-window": ["summaryContextWindow", "integer"],
  "timeout-ms": ["timeoutMs", "integer"],
  strict: ["strict", "boolean"],
};
const COMMANDS = ["compact", "measure", "check", "estimate", "validate", "help"];
const VALIDATE_FLAGS = ["format", "provider", "strict-alternation"];
const LLM_FLAGS = ["endpoint", "api", "model", "summary-context-window", "timeout-ms"];

/** Whether a streamed summary left standard error mid-line (one the library stopped reading does). */
let midLine = false;

/** Writes a line of its own to standard error. */
function line(text) {
  process.stderr.write(`${midLine ? "\n" : ""}${text}\n`);
  midLine = false;
}

function fail(message, code = 1) {
  line(message);
  process.exit(code);
}

const FLAGS = {
  ...Object.fromEntries(Object.entries(OPTION_FLAGS).map(([flag, [, kind]]) => [flag, { type: kind === "boolean" ? "boolean" : "string" }])),
  config: { type: "string" },
  out: { type: "string" },
  provider: { type: "string" },
  "strict-alternation": { type: "boolean" },
  endpoint: { type: "string" },
  api: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
};

/** Edits (insert, delete, replace a character) that turn `a` into `b`. */
function distance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** The flag `name` was probably meant as: the only one it begins, else one a few edits away (undefined: none). */
function nearest(name) {
  const flags = Object.keys(FLAGS);
  const begun = flags.filter((f) => f.startsWith(name));
  if (begun.length === 1) return begun[0];
  const [best] = flags.map((f) => [f, distance(name, f)]).sort((x, y) => x[1] - y[1]);
  return best[1] <= Math.max(2, name.length / 4) ? best[0] : undefined;
}

// A negative number after a flag that takes a number is that flag's value
// (parseArgs calls it ambiguous), so that the check of numbers says what is wrong.
const args = process.argv.slice(2);
for (let i = 0; i < args.length - 1; i++) {
  const kind = OPTION_FLAGS[args[i].slice(2)]?.[1];
  if (args[i].startsWith("--") && (kind === "integer" || kind === "number") && /^-[0-9.]/.test(args[i + 1])) args.splice(i, 2, `${args[i]}=${args[i + 1]}`);
}

let parsed;
try {
  parsed = parseArgs({ args, allowPositionals: true, options: FLAGS });
} catch (e) {
  // An unknown flag is named, with the flag it was probably meant as.
  const unknown = e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /'(-[^']*)'/.exec(e.message)?.[1] : undefined;
  if (unknown === undefined) fail(`${e.message}\n${usage}`, 2);
  const meant = nearest(unknown.replace(/^-+/, ""));
  fail(`unknown flag ${unknown}${meant === undefined ? "" : `; did you mean --${meant}?`}\n${usage}`, 2);
}
const { values, positionals } = parsed;
const [command, file] = positionals;
if (values.help || command === "help") {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (values.version) {
  process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`);
  process.exit(0);
}
if (!command) fail(usage, 2);
if (!COMMANDS.includes(command)) fail(`unknown command ${JSON.stringify(command)}\n${usage}`, 2);
if (!file) fail(`missing FILE\n${usage}`, 2);
if (positionals.length > 2) fail(`one FILE at a time; also given: ${positionals.slice(2).join(" ")}\n${usage}`, 2);
const given = Object.keys(values).filter((k) => values[k] !== undefined);
if (command === "validate") {
  const other = given.find((k) => !VALIDATE_FLAGS.includes(k));
  if (other) fail(`validate takes --format, --provider and --strict-alternation, not --${other}\n${usage}`, 2);
} else {
  const other = given.find((k) => k === "provider" || k === "strict-alternation");
  if (other) fail(`--${other} is an option of validate\n${usage}`, 2);
  const llm = given.find((k) => LLM_FLAGS.includes(k));
  if (llm && command !== "compact") {
    const why = llm === "model" ? " (the summary model; the window is --context-window)" : "";
    fail(`--${llm} is an option of compact with an LLM mode${why}\n${usage}`, 2);
  }
}

const source = file === "-" ? "standard input" : file;

/** Line and column of a character offset in `text`. */
function lineColumn(text, offset) {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return `line ${line}, column ${offset - before.lastIndexOf("\n")}`;
}

/** JSON.parse's complaint, with the line and column instead of a character offset. */
function jsonError(text, e) {
  const at = /at position (\d+)/.exec(e.message);
  const message = e.message.replace(/ in JSON at position \d+.*$/, "").replace(/^JSON\.parse: /, "");
  return at ? `${message} (${lineColumn(text, Number(at[1]))})` : message;
}

/**
 * The text of a file the user named: UTF-8, or UTF-16 when a byte order mark
 * says so (what Windows PowerShell's `>` writes). A missing or unreadable file
 * is said plainly.
 */
function readText(path, what) {
  try {
    const bytes = readFileSync(path === "-" ? 0 : path);
    const encoding = bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le" : bytes[0] === 0xfe && bytes[1] === 0xff ? "utf-16be" : "utf-8";
    // (the byte order mark is not part of the text: the decoder drops it)
    return new TextDecoder(encoding).decode(bytes);
  } catch (e) {
    const why = { ENOENT: "no such file", EACCES: "permission denied", EISDIR: "it is a directory" }[e.code] ?? e.message;
    throw new Error(`cannot read ${what} ${path === "-" ? "standard input" : path}: ${why}`);
  }
}

/** Whether `line` is one JSON value by itself. */
function isJson(line) {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

/**
 * The history in FILE: JSON, or JSON Lines (a `.jsonl` file, or text that is not
 * one JSON value but whose first line is).
 */
function readHistory() {
  const text = readText(file, "the history");
  let notJson;
  if (!file.endsWith(".jsonl")) {
    try {
      return JSON.parse(text);
    } catch (e) {
      const first = text.trim().split("\n")[0];
      if (first === text.trim() || !isJson(first)) throw new Error(`${source} is not JSON: ${jsonError(text, e)}`);
      notJson = jsonError(text, e);
    }
  }
  return text.split("\n").flatMap((line, i) => {
    if (line.trim() === "") return [];
    try {
      return [JSON.parse(line)];
    } catch (e) {
      const json = notJson === undefined ? "" : `not JSON (${notJson}), and `;
      throw new Error(`${source} is ${json}not JSON Lines: line ${i + 1}: ${jsonError(line, e).replace(/\(line 1, /, "(")}`);
    }
  });
}

/** The messages of a history: the array, or the first of `messages`, `input`, `contents` of a request. */
function messagesOf(history) {
  if (Array.isArray(history)) return history;
  const key = ["messages", "input", "contents"].find((k) => history?.[k] !== undefined);
  if (key === "input" && typeof history.input === "string") return [{ role: "user", content: history.input }];
  return Array.isArray(history?.[key]) ? history[key] : [];
}

/** The options: --config's table (its warnings printed), then each flag. */
async function optionsFromFlags() {
  const options = {};
  if (values.config) {
    let config;
    try {
      config = await parseConfig(readText(values.config, "the config"));
    } catch (e) {
      // (the config's errors name the config, not the history)
      if (e instanceof CompactionError) fail(`error ${e.code} (${values.config}): ${e.message}`);
      throw e;
    }
    Object.assign(options, config.options);
    for (const w of config.warnings) {
      if (values.strict && w.code === "UNKNOWN_OPTION") fail(`error INVALID_CONFIG (${values.config}): ${w.message.replace(/ ignored$/, "")} (--strict)`);
      process.stderr.write(`warning ${w.code} (${values.config}): ${w.message}\n`);
    }
  }
  for (const [flag, [key, kind]] of Object.entries(OPTION_FLAGS)) {
    const v = values[flag];
    if (v === undefined) continue;
    if (kind === "integer" || kind === "number") {
      // plain decimal only (Number() would also take "0x100", " 5000" and "")
      const n = Number(v);
      const decimal = kind === "integer" ? /^[0-9]+$/ : /^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
      if (!decimal.test(v) || !Number.isFinite(n)) {
        fail(`--${flag}: expected ${kind === "integer" ? "a whole number" : "a number"}, got ${JSON.stringify(v)}`, 2);
      }
      options[key] = n;
    } else if (kind === "list") {
      options[key] = v.split(",").map((s) => s.trim());
    } else {
      options[key] = v;
    }
  }
  return options;
}

const plural = (n, word) => `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;

/** The summarizer for the LLM modes, from --endpoint, --api and the key in the environment. */
function summarizerFor(history, options) {
  if (!values.endpoint) fail(`mode ${options.mode} writes its summary with an LLM: give --endpoint URL and --model MODEL\n${usage}`, 2);
  if (!values.model) fail(`--endpoint needs --model MODEL (the summary model)`, 2);
  if (!URL.canParse(values.endpoint)) fail(`--endpoint: expected a URL such as https://api.openai.com/v1, got ${JSON.stringify(values.endpoint)}`, 2);
  const format = measure(history, { format: options.format }).format;
  const api = values.api ?? (format === "anthropic" ? "anthropic" : "openai");
  if (!["openai", "anthropic"].includes(api)) fail(`--api: expected openai or anthropic, got ${JSON.stringify(api)}`, 2);
  const speaks = api === "anthropic" ? ["anthropic"] : ["openai", "moltis"];
  if (!speaks.includes(format)) {
    fail(`the summarizer request is in the history's format (${format}), which the ${api} API does not take; the CLI summarizes openai, moltis and anthropic histories (use the library with your own summarize function for the others)`, 2);
  }
  // (the Anthropic summarizer adds /v1/messages itself: a base given with /v1, as for OpenAI, loses it)
  const base = values.endpoint.replace(/\/+$/, "");
  const baseURL = api === "anthropic" ? base.replace(/\/v1$/, "") : base;
  const settings = { apiKey: process.env.CHAT_COMPACTION_API_KEY, model: values.model, baseURL };
  const inner = api === "anthropic" ? anthropicSummarizer(settings) : openAISummarizer(settings);
  // Stream the summary to standard error as it arrives.
  return async function* progress(request) {
    line(`summarizing ${plural(request.estimatedInputTokens, "token")} with ${request.model ?? values.model} (attempt ${request.attempt})…`);
    for await (const piece of inner(request)) {
      if (typeof piece === "string" && piece !== "") {
        process.stderr.write(piece);
        midLine = !piece.endsWith("\n");
      }
      yield piece;
    }
  };
}

async function compactCommand(history, options) {
  if (["structured", "llm_replace", "llm-replace"].includes(options.mode)) options.summarize = summarizerFor(history, options);
  else {
    const llm = LLM_FLAGS.find((k) => values[k] !== undefined);
    if (llm) fail(`--${llm} is for the LLM modes (structured, llm_replace), not ${options.mode ?? "deterministic"}`, 2);
  }
  const result = await compact(history, options);
  const output = JSON.stringify(result.request ?? result.messages, null, 2) + "\n";
  if (values.out) writeFileSync(values.out, output);
  else process.stdout.write(output);
  const { notice } = result;
  line(`${notice.text}\nmessages: ${notice.messagesBefore} → ${notice.messagesAfter}; tokens: ${notice.tokensBefore} → ${notice.tokensAfter}`);
  if (notice.fallback) process.stderr.write(`fell back from ${notice.fallback.from} (${notice.fallback.code}): ${notice.fallback.reason}\n`);
  for (const w of result.warnings) process.stderr.write(`warning ${w.code}: ${w.message}\n`);
}

/** What a message says, for a table: its texts, tool outputs and arguments, in any format (else its JSON). */
function preview(msg) {
  const found = [];
  const walk = (v, key) => {
    if (found.length > 8) return;
    if (typeof v === "string") {
      if (["text", "content", "output", "arguments", "thinking", "result", "input"].includes(key)) found.push(v);
    } else if (Array.isArray(v)) v.forEach((x) => walk(x, key));
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k === "value" ? key : k);
  };
  walk(msg, undefined);
  return found.length > 0 ? found.join(" | ") : JSON.stringify(msg);
}

/** The meter as a table: totals, then the heaviest messages first. */
function measureCommand(history, options) {
  const m = measure(history, options);
  const messages = messagesOf(history);
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const lines = [
    `format        ${m.format}, ${plural(messages.length, "message")}`,
    `tokens        ${m.tokens.toLocaleString("en-US")} (${pct(m.fraction)} of the window)`,
    `window        ${m.contextWindow.toLocaleString("en-US")} (${m.windowSource})${m.reservedOutputTokens ? `, ${m.reservedOutputTokens.toLocaleString("en-US")} kept for the answer` : ""}`,
    `threshold     ${m.threshold.toLocaleString("en-US")}: ${m.shouldCompact ? "compaction is due" : "not yet"}`,
  ];
  if (m.systemTokens) lines.push(`system        ${m.systemTokens.toLocaleString("en-US")}`);
  if (m.toolsTokens) lines.push(`tools         ${m.toolsTokens.toLocaleString("en-US")}`);
  lines.push("", "heaviest messages:", "  index  role        tokens   share  text");
  const order = m.perMessage.map((t, i) => [t, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [t, i] of order.slice(0, 15)) {
    const msg = messages[i] ?? {};
    const role = String(msg.role ?? msg.type ?? "?").slice(0, 10);
    const text = preview(msg).replace(/\s+/g, " ").slice(0, 60);
    lines.push(`  ${String(i).padStart(5)}  ${role.padEnd(10)} ${String(t).padStart(7)}  ${pct(t / Math.max(1, m.tokens)).padStart(6)}  ${text}`);
  }
  for (const w of m.warnings) lines.push(`warning ${w.code}: ${w.message}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}

function validateCommand(history) {
  const options = {};
  if (values.format) options.format = values.format;
  if (values.provider) options.provider = values.provider;
  if (values["strict-alternation"]) options.strictAlternation = true;
  const { format, violations } = validate(history, options);
  const about = `${format}, ${plural(messagesOf(history).length, "message")}`;
  if (violations.length === 0) {
    process.stdout.write(`valid (${about})\n`);
    return;
  }
  for (const v of violations) {
    const place = `messages[${v.index}]`;
    const text = v.message.startsWith(`${place}: `) ? v.message.slice(place.length + 2) : v.message;
    process.stdout.write(`${place} ${v.code}: ${text}\n`);
  }
  process.stderr.write(`invalid (${about}): ${plural(violations.length, "violation")}\n`);
  process.exitCode = 1;
}

try {
  const history = readHistory();
  if (command === "validate") {
    validateCommand(history);
  } else {
    const options = await optionsFromFlags();
    if (command === "compact") {
      await compactCommand(history, options);
    } else if (command === "measure") {
      measureCommand(history, options);
    } else if (command === "estimate") {
      process.stdout.write(`${estimateTokens(history, options)}\n`);
    } else {
      const m = measure(history, options);
      const numbers = `${m.tokens.toLocaleString("en-US")} tokens, threshold ${m.threshold.toLocaleString("en-US")}, window ${m.contextWindow.toLocaleString("en-US")}`;
      process.stdout.write(`${m.shouldCompact ? "compaction is due" : "no compaction needed yet"} (${numbers})\n`);
      for (const w of m.warnings) process.stderr.write(`warning ${w.code}: ${w.message}\n`);
      process.exitCode = m.shouldCompact ? 0 : 3;
    }
  }
} catch (e) {
  // (a library error has a code; a file the system could not read is said in words)
  const library = e instanceof CompactionError;
  let message = e.message;
  // An option a flag set is named as the flag.
  for (const [flag, [key]] of Object.entries(OPTION_FLAGS)) {
    if (library && values[flag] !== undefined && message.startsWith(`${key}:`)) message = `--${flag}${message.slice(key.length)}`;
  }
  fail(`${library ? `error ${e.code} (${source})` : "error"}: ${message}`);
}
