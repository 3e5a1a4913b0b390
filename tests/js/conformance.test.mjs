// The conformance fixtures (tests/fixtures/*.json) run through the built package
// in Node: the JS twin of tests/conformance.rs. Read that file's header for the
// fixture format; every case key and expectation key is ported here with the
// same semantics, and the same checks run on every successful compaction
// (input not mutated, byte-identical second run unless randomIds, provider rules
// of `format`, notice.messagesBefore / messagesAfter).
//
// Where the Rust runner reads a value the JS API does not return, this suite
// observes it through the public API instead, or skips it:
//
// - Option warnings (`warningsContain`, `warningsNotContain`, `warningCount`):
//   Rust checks the warnings of option parsing. JS returns them in a compaction
//   result (mixed with EMPTY_MESSAGE_DROPPED, which is
//   filtered out here) or from `parseConfig` (TOML). For `shouldCompact` and
//   `config` cases, and for compactions that fail, they are read from a
//   compaction of a one-message probe with the case's options (mode forced to
//   "deterministic" when the case's mode cannot compact it).
// - `trigger.threshold` and `triggerTokens`: `shouldCompact` only answers a
//   boolean, so the threshold is found by bisection: a one-message probe whose
//   tokens a `countTokens` counter sets exactly (countTokens is JS-only and does
//   not change the effective options). Exact unless the threshold is below one
//   message's framing overhead: then the expectation is only checked against
//   the range found, and reported as "only bounded".
// - `trigger.reported`: with a counter that counts every text as 0 except a
//   pending probe text, bisection on the pending text gives the history part of
//   the trigger estimate, which equals `estimateTokens(input)` exactly when no
//   reported usage is used. `trigger.estimatedTokens` is derived only when
//   `reported` is observed false (estimateTokens of input and pending text).
// - `effectiveOptions` from a JSON options object (JS has no call returning
//   them): mode, showSettingsHint, protectHead, protectTailMin,
//   toolPruneCharThreshold, thresholdPercent and tailBudgetRatio are observed
//   (notice, the TOO_SMALL_TO_COMPACT message of a recency probe, threshold
//   bisection with contextWindow 1e9); the other fields are skipped and counted.
//   From TOML, `parseConfig` returns them and they are matched directly.
// - `tailBudget` from a JSON options object: read from the TOO_SMALL_TO_COMPACT
//   message of a one-message history in recency_preserving mode. From TOML:
//   the documented formula over parseConfig's effective options.
//
// Skipped (and only bounded) keys are printed per case as diagnostics and summed
// up in one line at the end. Failures quote message contents cut to 400 bytes; CONFORMANCE_FULL=1
// shows them whole.
import { test, after } from "node:test";
import { readFileSync, readdirSync } from "node:fs";
import { compactSync, measure, shouldCompact, parseConfig, estimateTokens, validate } from "../../pkg/node.js";
import { checkRules } from "./rules.mjs";

const FIXTURES = new URL("../fixtures/", import.meta.url);
const FULL = Boolean(process.env.CONFORMANCE_FULL);

const CASE_KEYS = ["name", "description", "difference", "op", "format", "input", "options", "toml", "pending", "counter", "expect"];
const ANY_KEYS = ["error", "errorContains", "warningsContain", "warningsNotContain", "warningCount"];
const COMPACT_KEYS = [
  "length", "roles", "outputIndexEqualsInput", "messageEquals", "containsMessage", "messageContains",
  "messageNotContains", "messageContainsOnce", "messageHasLines", "messageStartsWith", "messageEndsWith",
  "messageMaxBytes", "countMessagesContaining", "summaryBlock", "summaryContains", "toolArgsValidJson",
  "pointerEquals", "pointerStartsWith", "pointerContains", "pointerAbsent", "pointerPresent", "pointerType",
  "pointerMaxBytes", "pointerJsonPartial", "notice", "noticeText", "requestFieldsKept", "smaller",
];
const TRIGGER_KEYS = ["shouldCompact", "trigger"];
const CONFIG_KEYS = ["effectiveOptions", "tailBudget", "triggerTokens"];
const SUMMARY_BLOCK_KEYS = ["message", "maxBytes", "maxLines", "maxLineBytes"];
const WARNING_KEYS = ["warningsContain", "warningsNotContain", "warningCount"];
/** Result warnings that do not come from the options (Rust's `config.warnings` lacks them). */
const NOT_OPTION_WARNINGS = new Set(["EMPTY_MESSAGE_DROPPED"]);

/** A failed expectation (the Rust runner's `Err(String)`). */
class Fail extends Error {}
const fail = (msg) => {
  throw new Fail(msg);
};

// ---- JSON helpers (the Rust runner's semantics) --------------------------------

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const utf8 = (s) => Buffer.byteLength(s, "utf8");
const show = (v) => (v === undefined ? "undefined" : JSON.stringify(v));

function short(s) {
  const oneLine = s.replaceAll("\n", "⏎");
  if (utf8(oneLine) <= 400 || FULL) return oneLine;
  let cut = "";
  let used = 0;
  for (const ch of oneLine) {
    const n = utf8(ch);
    if (used + n > 400) break;
    cut += ch;
    used += n;
  }
  return `${cut}… (${utf8(s)} bytes)`;
}

/** Expands the `$repeat` / `$concat` macros. */
function expand(v) {
  if (isObject(v) && "$repeat" in v) {
    if (typeof v.$repeat !== "string") fail("$repeat: expected a string");
    if (!Number.isInteger(v.times) || v.times < 0) fail('$repeat: expected "times": <non-negative integer>');
    if (Object.keys(v).length !== 2) fail('$repeat: only "$repeat" and "times" are allowed');
    return v.$repeat.repeat(v.times);
  }
  if (isObject(v) && "$concat" in v) {
    if (Object.keys(v).length !== 1) fail("$concat: no other keys allowed");
    if (!Array.isArray(v.$concat)) fail("$concat: expected an array");
    let s = "";
    for (const p of v.$concat) {
      const t = expand(p);
      if (typeof t !== "string") fail(`$concat: parts must be strings, got ${show(t)}`);
      s += t;
    }
    return s;
  }
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expand(x)]));
  if (Array.isArray(v)) return v.map(expand);
  return v;
}

/** Numbers compare as numbers; everything else structurally (key order ignored). */
function same(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => b[k] !== undefined && same(a[k], b[k]));
  }
  return a === b;
}

function partial(expected, actual, path) {
  if (isObject(expected) && isObject(actual)) {
    for (const [k, v] of Object.entries(expected)) {
      const p = `${path}.${k}`;
      if (actual[k] === undefined) fail(`${p}: missing (expected ${show(v)})`);
      partial(v, actual[k], p);
    }
    return;
  }
  if (!same(expected, actual)) fail(`${path}: expected ${show(expected)}, got ${show(actual)}`);
}

const obj = (v, key) => (isObject(v) ? v : fail(`fixture: ${key} must be an object`));
const arr = (v, key) => (Array.isArray(v) ? v : fail(`fixture: ${key} must be an array`));
const strs = (v, key) => arr(v, key).map((s) => (typeof s === "string" ? s : fail(`fixture: ${key} must hold strings`)));
const string = (v, key) => (typeof v === "string" ? v : fail(`fixture: ${key} must be a string`));
const number = (v, key) => (Number.isInteger(v) && v >= 0 ? v : fail(`fixture: ${key} must be a non-negative integer`));

/** Resolves an index key (`"2"`, `"-1"`) against a length. */
function index(key, len) {
  if (!/^[+-]?\d+$/.test(key)) fail(`fixture: bad message index ${show(key)}`);
  const i = Number(key);
  const resolved = i < 0 ? len + i : i;
  if (resolved < 0 || resolved >= len) fail(`message index ${key} out of range (output has ${len} messages)`);
  return resolved;
}

function indexValue(v, len) {
  if (typeof v === "number" && Number.isInteger(v)) return index(String(v), len);
  if (typeof v === "string") return index(v, len);
  return fail(`fixture: bad index ${show(v)}`);
}

function content(messages, key) {
  const i = index(key, messages.length);
  const c = messages[i]?.content;
  if (typeof c !== "string") fail(`messages[${i}].content is not a string: ${show(c ?? null)}`);
  return [i, c];
}

/** RFC 6901 lookup with serde_json's rules; `undefined` when absent. */
function pointer(doc, ptr) {
  if (ptr === "") return doc;
  if (!ptr.startsWith("/")) return undefined;
  let v = doc;
  for (const raw of ptr.slice(1).split("/")) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(v)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      v = v[Number(token)];
    } else if (isObject(v)) {
      v = Object.hasOwn(v, token) ? v[token] : undefined;
    } else {
      return undefined;
    }
    if (v === undefined) return undefined;
  }
  return v;
}

function at(doc, ptr) {
  const v = pointer(doc, ptr);
  return v === undefined ? fail(`${ptr}: absent`) : v;
}

function atStr(doc, ptr) {
  const v = at(doc, ptr);
  return typeof v === "string" ? v : fail(`${ptr}: not a string`);
}

function typeOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v; // boolean, number, string, object
}

/** Rust's `str::lines`: split on \n, a trailing \r dropped, no empty last line. */
function lines(s) {
  if (s === "") return [];
  const parts = s.split("\n");
  if (s.endsWith("\n")) parts.pop();
  return parts.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

/** Rust's `str::matches(s).count()`: non-overlapping occurrences. */
function occurrences(text, s) {
  if (s === "") return [...text].length + 1;
  let n = 0;
  for (let at = text.indexOf(s); at !== -1; at = text.indexOf(s, at + s.length)) n++;
  return n;
}

const roles = (msgs) => msgs.map((m) => (typeof m?.role === "string" ? m.role : "?"));
// A request keeps its messages under the first of these keys it has (Chat, Anthropic
// and AI SDK `messages`, OpenAI Responses `input`, Gemini `contents`).
const MESSAGE_KEYS = ["messages", "input", "contents"];
const messageKey = (input) => MESSAGE_KEYS.find((k) => isObject(input) && input[k] !== undefined);
const inputMessages = (input) => (Array.isArray(input) ? input : Array.isArray(input?.[messageKey(input)]) ? input[messageKey(input)] : []);
// The formats rules.mjs checks itself; the newer ones are checked with validate().
const LEGACY_FORMATS = ["openai", "anthropic", "moltis"];
const FORMATS = [...LEGACY_FORMATS, "openai-responses", "ai-sdk", "ai-sdk-ui", "gemini"];
const describeError = (e) => (e && typeof e === "object" && "code" in e ? `${e.code}: ${e.message}` : `(no code) ${e?.stack ?? e}`);

// ---- Observing what the JS API does not return ---------------------------------

const PROBE_TEXT = "\u0001conformance-probe";
const TINY = () => [{ role: "user", content: "hi" }];
const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The options with some keys replaced (both spellings of each removed first). */
function withOverrides(options, patch) {
  const o = { ...(options ?? {}) };
  for (const k of Object.keys(patch)) {
    delete o[k];
    delete o[snake(k)];
  }
  return Object.assign(o, patch);
}

/**
 * The trigger threshold of `options`, by bisection over a one-message probe whose
 * tokens a counter fixes exactly: `{lo, hi}` (lo === hi unless it is below the
 * probe's framing overhead).
 */
function observeThreshold(options) {
  let k = 0;
  const o = { ...(options ?? {}), countTokens: (t) => (t === PROBE_TEXT ? k : 0) };
  const probe = [{ role: "user", content: PROBE_TEXT }];
  const est = (n) => ((k = n), estimateTokens(probe, o));
  const fires = (n) => ((k = n), shouldCompact(probe, o, ""));
  if (fires(0)) return { lo: 1, hi: est(0) };
  const hi = firstFiring(fires, "threshold probe");
  return { lo: est(hi - 1) + 1, hi: est(hi) };
}

/** The smallest n ≥ 1 for which `fires(n)` holds (`fires(0)` must not), by doubling then bisection. */
function firstFiring(fires, what) {
  let lo = 0;
  let hi = 1;
  while (!fires(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > 2 ** 53) fail(`${what}: never fired`);
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fires(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

const showRange = (r) => (r.lo === r.hi ? String(r.lo) : `between ${r.lo} and ${r.hi}`);

/**
 * Whether the trigger used reported usage: `true`, `false`, or a string saying why
 * it cannot be told. Under a counter that counts every text as 0 (the pending
 * probe text excepted), the history part of the estimate is found by bisection on
 * the pending text and compared with the whole-history estimate.
 */
function observeReported(input, options, threshold) {
  let k = 0;
  const o = { ...(options ?? {}), countTokens: (t) => (t === PROBE_TEXT ? k : 0) };
  const whole = estimateTokens(input, o);
  const overhead = estimateTokens([{ role: "user", content: PROBE_TEXT }], o); // k = 0: framing only
  let lo;
  let hi;
  if (shouldCompact(input, o, "")) {
    [lo, hi] = [threshold.lo, Infinity];
  } else {
    const fires = (n) => ((k = n), shouldCompact(input, o, PROBE_TEXT));
    if (fires(0)) {
      [lo, hi] = [threshold.lo - overhead, threshold.hi - 1];
    } else {
      const above = firstFiring(fires, "reported probe");
      [lo, hi] = [threshold.lo - overhead - above, threshold.hi - overhead - above];
    }
  }
  if (whole < lo || whole > hi) return true;
  if (lo === hi) return false;
  return `the history part of the estimate (${lo}..${hi}) includes the whole-history estimate ${whole}`;
}

/** Option values from the TOO_SMALL_TO_COMPACT message of a one-message history in recency mode. */
function observeTooSmall(options) {
  let error;
  try {
    compactSync(TINY(), withOverrides(options, { mode: "recency_preserving" }));
  } catch (e) {
    error = e;
  }
  if (error?.code !== "TOO_SMALL_TO_COMPACT") {
    return { unobservable: `recency probe: expected TOO_SMALL_TO_COMPACT, got ${error ? describeError(error) : "a compaction"}` };
  }
  const m = /protect_head=(\d+) .*protect_tail_min=(\d+), tail budget (\d+) tokens.*tool_prune_char_threshold=(\d+) bytes/.exec(error.message);
  if (!m) return { unobservable: `recency probe: unexpected message ${error.message}` };
  const [, protectHead, protectTailMin, tailBudget, toolPruneCharThreshold] = m.map(Number);
  return { protectHead, protectTailMin, tailBudget, toolPruneCharThreshold };
}

/** The effective options observable from JSON options: `{values, via, unobservable}`. */
function observeOptions(options) {
  const values = {};
  const via = {};
  const unobservable = {};
  const put = (k, v, how) => {
    values[k] = v;
    via[k] = how;
  };
  // mode: the notice of a compaction, or the error that names it
  try {
    put("mode", compactSync(TINY(), options).notice.requestedMode, "notice.requestedMode");
  } catch (e) {
    const named = /mode "([a-z_]+)"/.exec(e.message ?? "");
    if (e.code === "SUMMARIZER_REQUIRED" && named) put("mode", named[1], "the SUMMARIZER_REQUIRED message");
    else if (e.code === "TOO_SMALL_TO_COMPACT" && /protect_tail_min=/.test(e.message)) put("mode", "recency_preserving", "the recency TOO_SMALL_TO_COMPACT message");
    else unobservable.mode = `compaction probe failed: ${describeError(e)}`;
  }
  try {
    const r = compactSync(TINY(), withOverrides(options, { mode: "deterministic" }));
    put("showSettingsHint", r.notice.settingsHint !== undefined, "notice.settingsHint");
  } catch (e) {
    unobservable.showSettingsHint = `compaction probe failed: ${describeError(e)}`;
  }
  const small = observeTooSmall(options);
  for (const k of ["protectHead", "protectTailMin", "toolPruneCharThreshold"]) {
    if (small.unobservable) unobservable[k] = small.unobservable;
    else put(k, small[k], "the TOO_SMALL_TO_COMPACT message");
  }
  // with a 1e9-token window, threshold and tail budget give the ratios to 9 digits
  const W = 1e9;
  const wide = withOverrides(options, { contextWindow: W });
  const t = observeThreshold(wide);
  if (t.lo === t.hi) {
    put("thresholdPercent", t.lo / W, "the trigger threshold with contextWindow 1e9");
    const s = observeTooSmall(wide);
    if (s.unobservable) unobservable.tailBudgetRatio = s.unobservable;
    else put("tailBudgetRatio", s.tailBudget / t.lo, "the tail budget with contextWindow 1e9");
  } else {
    unobservable.thresholdPercent = unobservable.tailBudgetRatio = `threshold not exact (${showRange(t)})`;
  }
  return { values, via, unobservable };
}

/** Warnings that come from the options (what Rust's `config.warnings` holds). */
const optionWarningsOf = (warnings) => warnings.filter((w) => !NOT_OPTION_WARNINGS.has(w.code));

/** The option warnings of `ctx` without a compaction result of the case: `{list}` or `{unobservable}`. */
function probeWarnings(ctx) {
  if (ctx.kind === "toml") return { list: ctx.warnings };
  let firstError;
  for (const options of [ctx.options, withOverrides(ctx.options, { mode: "deterministic" })]) {
    try {
      return { list: optionWarningsOf(compactSync(TINY(), options).warnings) };
    } catch (e) {
      firstError ??= e;
    }
  }
  return { unobservable: `no compaction to read option warnings from (${describeError(firstError)})` };
}

// ---- The runner -----------------------------------------------------------------

const skipped = []; // {label, key, reason}
const bounded = []; // {label, key, reason}: checked against a range, not an exact value

function checkError(expect, err, out) {
  if (expect.error === undefined) {
    out.push(`unexpected error ${describeError(err)}`);
    return;
  }
  if (expect.error !== err?.code) out.push(`expected error ${show(expect.error)}, got ${describeError(err)}`);
  if (expect.errorContains !== undefined) {
    try {
      for (const s of strs(expect.errorContains, "errorContains")) {
        if (!String(err?.message).includes(s)) out.push(`error message lacks ${show(s)}: ${err?.message}`);
      }
    } catch (e) {
      if (!(e instanceof Fail)) throw e;
      out.push(e.message);
    }
  }
}

function checkWarnings(expect, source, out, skip) {
  const present = WARNING_KEYS.filter((k) => expect[k] !== undefined);
  if (present.length === 0) return;
  const got = source();
  if (got.unobservable) {
    for (const k of present) skip(k, got.unobservable);
    return;
  }
  const messages = got.list.map((w) => w.message);
  const run = (f) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof Fail)) throw e;
      out.push(e.message);
    }
  };
  if (expect.warningsContain !== undefined) {
    run(() => {
      for (const s of strs(expect.warningsContain, "warningsContain")) {
        if (!messages.some((m) => m.includes(s))) fail(`no warning contains ${show(s)}; warnings: ${show(messages)}`);
      }
    });
  }
  if (expect.warningsNotContain !== undefined) {
    run(() => {
      for (const s of strs(expect.warningsNotContain, "warningsNotContain")) {
        const m = messages.find((x) => x.includes(s));
        if (m !== undefined) fail(`a warning contains ${show(s)}: ${m}`);
      }
    });
  }
  if (expect.warningCount !== undefined) {
    run(() => {
      const n = number(expect.warningCount, "warningCount");
      if (messages.length !== n) fail(`expected ${n} warnings, got ${messages.length}: ${show(messages)}`);
    });
  }
}

/** `{kind: "options", options}` or `{kind: "toml", options, warnings}`, or `{error}` from parseConfig. */
async function configure(raw) {
  if (raw.options !== undefined && raw.toml !== undefined) fail("fixture: give either options or toml, not both");
  if (raw.toml !== undefined) {
    const text = string(raw.toml, "toml");
    try {
      const { options, warnings } = await parseConfig(text);
      return { kind: "toml", options: withCounter(raw, options), warnings };
    } catch (error) {
      return { kind: "toml", error };
    }
  }
  return { kind: "options", options: withCounter(raw, raw.options) };
}

/** A case's `counter: "chars/4"`: every text counts ceil(characters / 4) tokens. */
function withCounter(raw, options) {
  if (raw.counter === undefined) return options;
  if (raw.counter !== "chars/4") fail(`fixture: unknown counter ${JSON.stringify(raw.counter)}`);
  return { ...(options ?? {}), countTokens: (t) => Math.ceil([...t].length / 4) };
}

function caseInput(raw) {
  if (raw.input === undefined) fail("fixture: input is required for this op");
  return expand(raw.input);
}

async function runCase(raw, expect, skip) {
  const out = [];
  const op = typeof raw.op === "string" ? raw.op : "compact";
  const allowed = { compact: COMPACT_KEYS, shouldCompact: TRIGGER_KEYS, config: CONFIG_KEYS }[op];
  if (!allowed) return [`fixture: unknown op ${show(op)}`];
  for (const key of Object.keys(expect)) {
    if (!ANY_KEYS.includes(key) && !allowed.includes(key)) out.push(`fixture: unknown expectation key ${show(key)} for op ${show(op)}`);
  }
  if (out.length) return out;
  try {
    const ctx = await configure(raw);
    if (ctx.error) {
      checkError(expect, ctx.error, out);
      return out;
    }
    if (op === "config") checkConfig(expect, ctx, out, skip);
    else if (op === "shouldCompact") checkTrigger(raw, expect, ctx, out, skip);
    else checkCompact(raw, expect, ctx, out, skip);
  } catch (e) {
    if (!(e instanceof Fail)) throw e;
    out.push(e.message);
  }
  return out;
}

function checkConfig(expect, ctx, out, skip) {
  if (ctx.kind === "options") {
    // the options alone: estimating a text validates them and does nothing else
    try {
      estimateTokens("", ctx.options);
    } catch (e) {
      checkError(expect, e, out);
      return;
    }
  }
  checkWarnings(expect, () => probeWarnings(ctx), out, skip);
  if (expect.error !== undefined) fail(`expected error ${show(expect.error)}, but the options were accepted`);
  const run = (f) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof Fail)) throw e;
      out.push(e.message);
    }
  };
  if (ctx.kind === "toml") {
    // (without context_window in the table, the options leave the window to the call: the default)
    const o = { ...ctx.options, contextWindow: ctx.options.contextWindow ?? measure([{ role: "user", content: "x" }], ctx.options).contextWindow };
    const round = (x) => Math.max(0, Math.round(Math.round(x * 1e9) / 1e9));
    if (expect.effectiveOptions !== undefined) run(() => partial(expect.effectiveOptions, o, "options"));
    if (expect.tailBudget !== undefined) {
      run(() => {
        const want = number(expect.tailBudget, "tailBudget");
        const got = Math.max(1, round(o.contextWindow * o.thresholdPercent * o.tailBudgetRatio));
        if (got !== want) fail(`tail budget: expected ${want}, got ${got} (from parseConfig's effective options)`);
      });
    }
    if (expect.triggerTokens !== undefined) {
      run(() => {
        const want = number(expect.triggerTokens, "triggerTokens");
        const got = Math.max(1, round(o.contextWindow * o.thresholdPercent));
        if (got !== want) fail(`trigger tokens: expected ${want}, got ${got} (from parseConfig's effective options)`);
      });
    }
    return;
  }
  if (expect.effectiveOptions !== undefined) {
    run(() => {
      const want = obj(expect.effectiveOptions, "effectiveOptions");
      const seen = observeOptions(ctx.options);
      for (const [k, v] of Object.entries(want)) {
        if (!(k in seen.values)) {
          skip(`effectiveOptions.${k}`, seen.unobservable[k] ?? "not observable through the JS API (no call returns effective options for an options object)");
          continue;
        }
        const got = seen.values[k];
        const derived = k === "thresholdPercent" || k === "tailBudgetRatio";
        const ok = derived && typeof v === "number" ? Math.abs(got - v) < 1e-9 : same(v, got);
        if (!ok) out.push(`options.${k}: expected ${show(v)}, got ${show(got)} (observed via ${seen.via[k]})`);
      }
    });
  }
  if (expect.tailBudget !== undefined) {
    run(() => {
      const want = number(expect.tailBudget, "tailBudget");
      const s = observeTooSmall(ctx.options);
      if (s.unobservable) skip("tailBudget", s.unobservable);
      else if (s.tailBudget !== want) fail(`tail budget: expected ${want}, got ${s.tailBudget} (from the TOO_SMALL_TO_COMPACT message)`);
    });
  }
  if (expect.triggerTokens !== undefined) {
    run(() => {
      const want = number(expect.triggerTokens, "triggerTokens");
      const t = observeThreshold(ctx.options);
      if (want < t.lo || want > t.hi) fail(`trigger tokens: expected ${want}, got ${showRange(t)} (shouldCompact bisection)`);
      if (t.lo !== t.hi) skip.bounded("triggerTokens", `threshold only known to be ${showRange(t)} (below one message's framing)`);
    });
  }
}

function checkTrigger(raw, expect, ctx, out, skip) {
  const input = caseInput(raw);
  let pending = "";
  if (raw.pending !== undefined) {
    pending = expand(raw.pending);
    if (typeof pending !== "string") fail("fixture: pending must be a string");
  }
  let decision;
  try {
    decision = shouldCompact(input, ctx.options, pending);
  } catch (e) {
    if (e?.code !== "INVALID_CONFIG") checkWarnings(expect, () => probeWarnings(ctx), out, skip);
    checkError(expect, e, out);
    return;
  }
  checkWarnings(expect, () => probeWarnings(ctx), out, skip);
  if (expect.error !== undefined) fail(`expected error ${show(expect.error)}, got shouldCompact ${decision}`);
  if (typeof decision !== "boolean") out.push(`shouldCompact returned ${show(decision)}, not a boolean`);
  if (expect.shouldCompact !== undefined && expect.shouldCompact !== decision) {
    out.push(`shouldCompact: expected ${show(expect.shouldCompact)}, got ${decision}`);
  }
  if (expect.trigger === undefined) return;
  const want = expect.trigger;
  if (!isObject(want)) fail(`trigger: expected ${show(want)}, got an object`);
  let threshold;
  const thresholdOf = () => (threshold ??= observeThreshold(ctx.options));
  let reported;
  const reportedOf = () => (reported ??= observeReported(input, ctx.options, thresholdOf()));
  for (const [k, v] of Object.entries(want)) {
    const p = `trigger.${k}`;
    if (k === "shouldCompact") {
      if (!same(v, decision)) out.push(`${p}: expected ${show(v)}, got ${decision}`);
    } else if (k === "threshold") {
      const t = thresholdOf();
      if (typeof v !== "number" || v < t.lo || v > t.hi) out.push(`${p}: expected ${show(v)}, got ${showRange(t)} (shouldCompact bisection)`);
      else if (t.lo !== t.hi) skip.bounded(p, `threshold only known to be ${showRange(t)} (below one message's framing)`);
    } else if (k === "reported") {
      const r = reportedOf();
      if (typeof r === "string") skip(p, r);
      else if (!same(v, r)) out.push(`${p}: expected ${show(v)}, got ${r} (observed by bisection on the pending text)`);
    } else if (k === "estimatedTokens") {
      const r = reportedOf();
      if (r !== false) {
        skip(p, r === true ? "the estimate starts from reported usage, which the JS API does not return" : r);
        continue;
      }
      const overhead = estimateTokens([{ role: "user", content: PROBE_TEXT }], { ...(ctx.options ?? {}), countTokens: () => 0 });
      const got = estimateTokens(input, ctx.options) + (pending === "" ? 0 : estimateTokens(pending, ctx.options) + overhead);
      if (!same(v, got)) out.push(`${p}: expected ${show(v)}, got ${got} (estimateTokens of history and pending text)`);
    } else {
      out.push(`${p}: missing (expected ${show(v)})`);
    }
  }
}

function checkCompact(raw, expect, ctx, out, skip) {
  const input = caseInput(raw);
  const pristine = structuredClone(input);
  let result;
  try {
    result = compactSync(input, ctx.options);
  } catch (e) {
    // an INVALID_CONFIG here is the options failing, where Rust stops before the warnings
    if (e?.code !== "INVALID_CONFIG") checkWarnings(expect, () => probeWarnings(ctx), out, skip);
    checkError(expect, e, out);
    return;
  }
  checkWarnings(expect, () => (ctx.kind === "toml" ? { list: ctx.warnings } : { list: optionWarningsOf(result.warnings) }), out, skip);
  if (expect.error !== undefined) {
    fail(`expected error ${show(expect.error)}, got ${result.messages.length} messages: ${short(JSON.stringify(result.messages))}`);
  }
  if (typeof raw.format !== "string") fail('fixture: compact cases need "format"');
  const format = raw.format;
  if (!FORMATS.includes(format)) fail(`fixture: unknown format ${show(format)}`);

  // Invariants.
  const serialized = JSON.stringify(result);
  if (!same(input, pristine)) out.push("the input was mutated");
  const randomIds = ctx.kind === "toml" ? ctx.options.randomIds === true : ctx.options?.randomIds === true || ctx.options?.random_ids === true;
  if (!randomIds) {
    try {
      const again = compactSync(input, ctx.options);
      if (JSON.stringify(again) !== serialized) out.push("a second run gave different output");
    } catch (e) {
      out.push(`a second run failed: ${describeError(e)}`);
    }
    if (!same(input, pristine)) out.push("the input was mutated by the second run");
  }
  try {
    if (LEGACY_FORMATS.includes(format)) checkRules(format, result.messages);
    else {
      const { violations } = validate(result.messages, { format });
      if (violations.length > 0) throw new Error(show(violations));
    }
  } catch (e) {
    out.push(`provider rule broken: ${e.message}`);
  }
  const before = inputMessages(input).length;
  if (result.notice.messagesBefore !== before || result.notice.messagesAfter !== result.messages.length) {
    out.push(
      `notice counts ${result.notice.messagesBefore} → ${result.notice.messagesAfter} do not match the input (${before}) and output (${result.messages.length})`,
    );
  }

  const doc = result; // {messages, request?, notice, summary?, warnings}
  const msgs = result.messages;
  const inputs = inputMessages(input);
  for (const [key, want] of Object.entries(expect)) {
    try {
      checkCompactKey(key, want, { doc, msgs, inputs, input, result });
    } catch (e) {
      if (!(e instanceof Fail)) throw e;
      out.push(e.message);
    }
  }
}

function checkCompactKey(key, want, { doc, msgs, inputs, input, result }) {
  switch (key) {
    case "error":
    case "errorContains":
    case "warningsContain":
    case "warningsNotContain":
    case "warningCount":
      return;
    case "length": {
      const n = number(want, key);
      if (msgs.length !== n) fail(`length: expected ${n}, got ${msgs.length}; roles ${show(roles(msgs))}`);
      return;
    }
    case "roles": {
      const w = strs(want, key);
      const got = roles(msgs);
      if (!same(w, got)) fail(`roles: expected ${show(w)}, got ${show(got)}`);
      return;
    }
    case "outputIndexEqualsInput":
      for (const [o, i] of Object.entries(obj(want, key))) {
        const oi = index(o, msgs.length);
        const ii = indexValue(i, inputs.length);
        if (!same(msgs[oi], inputs[ii])) fail(`output[${oi}] is not a verbatim copy of input[${ii}]: ${short(show(msgs[oi]))}`);
      }
      return;
    case "messageEquals":
      for (const [k, v] of Object.entries(obj(want, key))) {
        const i = index(k, msgs.length);
        if (!same(msgs[i], v)) fail(`messages[${i}]: expected ${show(v)}, got ${short(show(msgs[i]))}`);
      }
      return;
    case "containsMessage":
      for (const v of arr(want, key)) {
        if (!msgs.some((m) => same(m, v))) fail(`no output message equals ${show(v)}`);
      }
      return;
    case "messageContains":
    case "messageNotContains":
    case "messageContainsOnce":
    case "messageHasLines":
      for (const [k, subs] of Object.entries(obj(want, key))) {
        const [i, text] = content(msgs, k);
        for (const s of strs(subs, key)) {
          const bad =
            key === "messageContains"
              ? !text.includes(s)
              : key === "messageNotContains"
                ? text.includes(s)
                : key === "messageContainsOnce"
                  ? occurrences(text, s) !== 1
                  : !lines(text).includes(s);
          if (bad) fail(`${key} messages[${i}] ${show(s)} failed; content: ${short(text)}`);
        }
      }
      return;
    case "messageStartsWith":
    case "messageEndsWith":
      for (const [k, s] of Object.entries(obj(want, key))) {
        const [i, text] = content(msgs, k);
        const str = string(s, key);
        const ok = key === "messageStartsWith" ? text.startsWith(str) : text.endsWith(str);
        if (!ok) fail(`${key} messages[${i}] ${show(str)} failed; content: ${short(text)}`);
      }
      return;
    case "messageMaxBytes":
      for (const [k, n] of Object.entries(obj(want, key))) {
        const [i, text] = content(msgs, k);
        const max = number(n, key);
        if (utf8(text) > max) fail(`messages[${i}] has ${utf8(text)} bytes, more than ${max}`);
      }
      return;
    case "countMessagesContaining":
      for (const [s, n] of Object.entries(obj(want, key))) {
        const expected = number(n, key);
        const got = msgs.filter((m) => JSON.stringify(m).includes(s)).length;
        if (got !== expected) fail(`${got} output messages contain ${show(s)}, expected ${expected}`);
      }
      return;
    case "summaryBlock":
      return checkSummaryBlock(want, msgs);
    case "summaryContains": {
      const subs = strs(want, key);
      if (typeof result.summary !== "string") fail("the result has no summary");
      for (const s of subs) if (!result.summary.includes(s)) fail(`summary lacks ${show(s)}: ${short(result.summary)}`);
      return;
    }
    case "toolArgsValidJson": {
      let problem;
      msgs.forEach((m, i) => {
        const calls = Array.isArray(m?.tool_calls) ? m.tool_calls : [];
        calls.forEach((c, k) => {
          const args = typeof c?.function?.arguments === "string" ? c.function.arguments : "";
          try {
            JSON.parse(args);
          } catch {
            problem = `messages[${i}].tool_calls[${k}] arguments are not valid JSON: ${short(args)}`;
          }
        });
      });
      if (want !== true) fail("fixture: toolArgsValidJson must be true");
      if (problem) fail(problem);
      return;
    }
    case "pointerEquals":
      for (const [p, v] of Object.entries(obj(want, key))) {
        const got = at(doc, p);
        if (!same(got, v)) fail(`${p}: expected ${show(v)}, got ${short(show(got))}`);
      }
      return;
    case "pointerStartsWith":
      for (const [p, v] of Object.entries(obj(want, key))) {
        const got = atStr(doc, p);
        const s = string(v, key);
        if (!got.startsWith(s)) fail(`${p}: does not start with ${show(s)}: ${short(got)}`);
      }
      return;
    case "pointerContains":
      for (const [p, v] of Object.entries(obj(want, key))) {
        const got = atStr(doc, p);
        for (const s of strs(v, key)) if (!got.includes(s)) fail(`${p}: lacks ${show(s)}: ${short(got)}`);
      }
      return;
    case "pointerAbsent":
      for (const p of strs(want, key)) {
        const v = pointer(doc, p);
        if (v !== undefined) fail(`${p}: expected absent, got ${short(show(v))}`);
      }
      return;
    case "pointerPresent":
      for (const p of strs(want, key)) at(doc, p);
      return;
    case "pointerType":
      for (const [p, t] of Object.entries(obj(want, key))) {
        const got = typeOf(at(doc, p));
        if (got !== t) fail(`${p}: expected a ${typeof t === "string" ? t : show(t)}, got a ${got}`);
      }
      return;
    case "pointerMaxBytes":
      for (const [p, n] of Object.entries(obj(want, key))) {
        const got = atStr(doc, p);
        const max = number(n, key);
        if (utf8(got) > max) fail(`${p}: ${utf8(got)} bytes, more than ${max}`);
      }
      return;
    case "pointerJsonPartial":
      for (const [p, v] of Object.entries(obj(want, key))) {
        const got = atStr(doc, p);
        let parsed;
        try {
          parsed = JSON.parse(got);
        } catch (e) {
          fail(`${p}: not valid JSON (${e.message}): ${short(got)}`);
        }
        partial(v, parsed, p);
      }
      return;
    case "notice":
      return partial(want, doc.notice, "notice");
    case "noticeText":
      if (want !== result.notice.text) fail(`notice text: expected ${show(want)}, got ${show(result.notice.text)}`);
      return;
    case "requestFieldsKept": {
      if (typeof want !== "boolean") fail("fixture: requestFieldsKept must be a boolean");
      const r = result.request;
      if (want && r !== undefined) {
        const expected = isObject(input) ? { ...input, [messageKey(input)]: msgs } : input;
        if (!same(r, expected)) fail(`request differs from the input beyond messages: ${short(show(r))}`);
      } else if (want) {
        fail("the result has no request");
      } else if (r !== undefined) {
        fail("the result has a request, but the input was an array");
      }
      return;
    }
    case "smaller": {
      const { tokensBefore: b, tokensAfter: a } = result.notice;
      if (want !== true) fail("fixture: smaller must be true");
      if (!(a < b)) fail(`output not smaller: ${b} → ${a} tokens`);
      return;
    }
    default:
      fail(`fixture: unhandled key ${show(key)}`);
  }
}

function checkSummaryBlock(want, msgs) {
  const spec = obj(want, "summaryBlock");
  for (const k of Object.keys(spec)) {
    if (!SUMMARY_BLOCK_KEYS.includes(k)) fail(`fixture: unknown summaryBlock key ${show(k)}`);
  }
  if (spec.message === undefined) fail("fixture: summaryBlock.message is required");
  const key = show(spec.message).replace(/^"+|"+$/g, "");
  const [i, text] = content(msgs, key);
  const start = text.indexOf("<summary>");
  if (start === -1) fail(`messages[${i}] has no <summary>`);
  const close = text.lastIndexOf("</summary>");
  const end = close === -1 ? -1 : close + "</summary>".length;
  if (end === -1 || end <= start) fail(`messages[${i}] has no </summary>`);
  const block = text.slice(start, end);
  const limit = (k) => (spec[k] === undefined ? undefined : number(spec[k], k));
  const maxBytes = limit("maxBytes");
  if (maxBytes !== undefined && utf8(block) > maxBytes) {
    fail(`summary block has ${utf8(block)} bytes, more than ${maxBytes}: ${short(block)}`);
  }
  const maxLines = limit("maxLines");
  if (maxLines !== undefined && lines(block).length > maxLines) {
    fail(`summary block has ${lines(block).length} lines, more than ${maxLines}`);
  }
  const maxLineBytes = limit("maxLineBytes");
  if (maxLineBytes !== undefined) {
    const l = lines(block).find((x) => utf8(x) > maxLineBytes);
    if (l !== undefined) fail(`summary line of ${utf8(l)} bytes (max ${maxLineBytes}): ${l}`);
  }
}

// ---- One test per case ------------------------------------------------------------

const files = readdirSync(FIXTURES).filter((f) => f.endsWith(".json")).sort();
const names = new Set();
let total = 0;

test("tests/fixtures holds fixture files", () => {
  if (files.length === 0) throw new Error("no fixtures in tests/fixtures");
});

for (const file of files) {
  let cases;
  try {
    const top = JSON.parse(readFileSync(new URL(file, FIXTURES), "utf8"));
    if (!isObject(top)) throw new Error("expected {about, cases}");
    for (const k of Object.keys(top)) if (k !== "about" && k !== "cases") throw new Error(`unknown top-level key ${show(k)}`);
    if (!Array.isArray(top.cases)) throw new Error('"cases" must be an array');
    cases = top.cases;
  } catch (e) {
    test(file, () => {
      throw new Error(`${file}: ${e.message}`);
    });
    continue;
  }
  cases.forEach((raw, n) => {
    total++;
    const name = isObject(raw) && typeof raw.name === "string" ? raw.name : undefined;
    const label = `${file} / ${name ?? `case ${n}`}`;
    const problems = [];
    if (!isObject(raw)) problems.push(`${file} case ${n}: not an object`);
    else if (name === undefined) problems.push(`${file} case ${n}: missing name`);
    else {
      if (names.has(name)) problems.push("fixture: duplicate case name");
      names.add(name);
      for (const k of Object.keys(raw)) if (!CASE_KEYS.includes(k)) problems.push(`fixture: unknown case key ${show(k)}`);
      if (typeof raw.description !== "string") problems.push("fixture: missing description");
      if (raw.difference !== undefined && !(typeof raw.difference === "string" && raw.difference.startsWith("DIFFERENCE: "))) {
        problems.push('fixture: difference must start with "DIFFERENCE: "');
      }
      if (!isObject(raw.expect)) problems.push("fixture: missing expect object");
    }
    test(label, async (t) => {
      const skip = (key, reason) => {
        skipped.push({ label, key, reason });
        t.diagnostic(`skipped ${key}: ${reason}`);
      };
      skip.bounded = (key, reason) => {
        bounded.push({ label, key, reason });
        t.diagnostic(`bounded ${key}: ${reason}`);
      };
      const found = problems.length ? problems : await runCase(raw, raw.expect, skip);
      if (found.length) throw new Error(`${label}:\n    ${found.join("\n    ")}`);
    });
  });
}

after(() => {
  const byKey = new Map();
  for (const s of skipped) byKey.set(s.key, (byKey.get(s.key) ?? 0) + 1);
  const list = [...byKey].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(", ");
  const partly = bounded.map((b) => `${b.key} in ${b.label.split(" / ")[1]}`).join(", ");
  console.log(
    `${total} cases, ${skipped.length} keys skipped${skipped.length ? `: ${list}` : ""}` +
      (bounded.length ? `; ${bounded.length} only bounded: ${partly}` : "") +
      " (reasons in the per-case diagnostics)",
  );
});
