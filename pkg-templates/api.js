// The package's JS API over the raw wasm exports. Every runtime entry file
// initialises the wasm module, then re-exports this.
//
// Histories cross into wasm as a value tape (src/json/tape.rs documents it): one
// walk over the caller's objects writes the structure into a Uint32Array and every
// string and number, UTF-8, into one byte buffer — no JSON.stringify, no
// per-character copying. wasm answers with a plan; messages it kept verbatim come
// back as input indices and are returned as the caller's own objects (never
// mutated, never copied). JSON text or bytes (compactBody, measureBody,
// compactJsonString) go to wasm as they are, and are read there.
import * as raw from "./chat_compaction.js";

/** An error from chat-compaction; `code` is stable (INVALID_INPUT, TOO_SMALL_TO_COMPACT, …). */
export class CompactionError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = "CompactionError";
    this.code = code;
  }
}
// The class's own name survives minifying (what `console.log(error)` shows).
Object.defineProperty(CompactionError, "name", { value: "CompactionError" });

/**
 * What a value the caller's code threw says, for an error message: an Error's
 * message, else the value as text. Never throws: a null-prototype object has
 * no text, and a `message` getter or a `toString` may throw.
 */
function said(e) {
  try {
    return String(e instanceof Error ? e.message : e);
  } catch {
    return "(a value that cannot be read as text)";
  }
}

const MAX_DEPTH = 128;
/** Longest array read (a sparse `length = 2 ** 32 - 1` would take forever). */
const MAX_ITEMS = 10_000_000;
/**
 * Where a request object keeps its messages, in the order Rust looks for them
 * (`MESSAGE_KEYS` in src/formats/mod.rs): Chat Completions, Anthropic and the AI
 * SDK `messages`, OpenAI Responses `input`, Gemini `contents`. The first present wins.
 */
const MESSAGE_KEYS = ["messages", "input", "contents"];
const EXPECTED_INPUT = 'an array of messages or a request object with a "messages" ("input", "contents") array';
const encoder = new TextEncoder();

// Scratch buffers, reused across calls and grown on demand.
let words = new Uint32Array(1 << 14);
let bytes = new Uint8Array(1 << 16);
let nWords = 0;
let nBytes = 0;
// Where the strings of the segment being written start (offsets are relative to it).
let base = 0;
// The history's message array as it was read (a getter may answer a new one each
// time): the root array, or per message key of a request object the value written.
let readMessages;
let readKeys = new Map();
/** Each message array written → its messages' cache entries (undefined: not cached). */
let entriesOf = new Map();
// Whether a string with lone UTF-16 surrogates was written (they travel as
// private-use characters, so ids that differ only there stay different).
let remapped = false;
// Whether an encoding is under way (a getter or toJSON may call in again).
let encoding = false;
// Whether messages are written from (and into) the per-message cache this call.
let caching = true;
// Whether the cache takes a message array only once it was seen before (`seenBefore`).
let onceSeen = false;
// The tokenizer whose records let a stub stand for a known message (the meter
// and the total only; undefined: every message is written out).
let stubBy;
/**
 * The session (src/session.rs): the history wasm holds from an earlier call,
 * `{id, items, entries, by, stubbed}` — its number, the message objects it
 * holds in order and their cache entries, the tokenizer they were estimated
 * with, and whether a meter's stub stands for any of them (a compaction then
 * takes none). Wasm ends a session after 32 calls (each leaves its tape there).
 */
const NO_SESSION = { id: 0, items: [], entries: [], by: undefined, stubbed: false };
let session = NO_SESSION;
/**
 * This call's view of the session: the items it may send as `earlier` nodes
 * (undefined: none), and the cache entries their views were read from (what
 * they are compared with: a later write of the same object elsewhere does not
 * change what the session holds).
 */
let heldItems;
let heldEntries;
/** Messages sent as `earlier` nodes so far: the first `refs` of the history. */
let refs = 0;
/** The items of the history array (the first message array written), as read, and the array. */
let historyItems;
let historyArray;
/** Whether the messages being written are the history's. */
let writingHistory = false;
/** Stubs written this call. */
let stubsWritten = 0;
/** The bit of a record's first number (src/memo.rs) that says whether a stub may stand for its message. */
const RECORD_STUB = 1 << 3;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const HIDDEN_SURROGATE = /[\u{10F800}-\u{10FFFF}]/gu;
// (`search` ignores the global regex's lastIndex, which `test` would carry from call to call)
const wellFormed = (s) => (typeof s.isWellFormed === "function" ? s.isWellFormed() : s.search(LONE_SURROGATE) < 0);
/**
 * JSON of what the caller wrote outside the messages (options, a summarizer's
 * answers), its lone surrogates as U+FFFD: a summary cut in the middle of an
 * emoji is still a summary, where the history's own strings keep theirs.
 */
const wellFormedJson = (v, replacer = (key, x) => x) =>
  JSON.stringify(v, (key, x) => {
    x = replacer(key, x);
    return typeof x === "string" && !wellFormed(x) ? x.replace(LONE_SURROGATE, "\uFFFD") : x;
  });
/** Lone surrogate U+D800 + k becomes U+10F800 + k (valid UTF-8, distinct); `restore` undoes it. */
const hide = (s) => s.replace(LONE_SURROGATE, (c) => String.fromCodePoint(0x10f800 + c.charCodeAt(0) - 0xd800));
const restoreString = (s) => s.replace(HIDDEN_SURROGATE, (c) => String.fromCharCode(c.codePointAt(0) - 0x10f800 + 0xd800));

function grow(array, need) {
  let size = array.length * 2;
  while (size < need) size *= 2;
  const bigger = new array.constructor(size);
  bigger.set(array);
  return bigger;
}

function word(w) {
  if (nWords === words.length) words = grow(words, nWords + 1);
  words[nWords++] = w;
}

function string(s) {
  const n = s.length;
  // Every string is written where it occurs: looking short ones up to share
  // them within a segment cost more (a Map per message) than writing them again
  // (−15 to −25% on a cold call without it, A/B in one process).
  if (n <= 24) {
    // Short ASCII (most keys, roles, ids) is written by hand: no view of the
    // buffer to allocate, no surrogates to look for.
    if (nBytes + n > bytes.length) bytes = grow(bytes, nBytes + n);
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) break;
      bytes[nBytes + i] = c;
    }
    if (i === n) {
      word(nBytes - base);
      word(n);
      nBytes += n;
      return;
    }
  }
  if (!wellFormed(s)) {
    s = hide(s);
    remapped = true;
  }
  const most = s.length * 3;
  if (nBytes + most > bytes.length) bytes = grow(bytes, nBytes + most);
  const { written } = encoder.encodeInto(s, bytes.subarray(nBytes));
  word(nBytes - base);
  word(written);
  nBytes += written;
}

function invalid(message) {
  return new CompactionError("INVALID_INPUT", message);
}

/** Whether a property value is left out, as JSON.stringify leaves it out. */
const skipped = (item) => item === undefined || typeof item === "function" || typeof item === "symbol";

/**
 * Whether everything of the message being written so far is frozen plain data:
 * frozen plain objects and arrays whose properties are values (no getters), no
 * `toJSON`. Such a message can never change (freezing cannot be undone, and
 * strings are immutable), so later calls take it from the cache without
 * walking it — what an app that keeps its state frozen (Immer, Redux Toolkit,
 * `Object.freeze`) saves on every call. Checked while the message is written;
 * trusted while no `toJSON` was added to `Object.prototype` or
 * `Array.prototype` (`trustFrozen`). A Proxy is trusted like the frozen object
 * it stands for.
 */
let frozen = false;
let trustFrozen = true;

/**
 * Whether `v` is a frozen plain object or array with value properties only
 * (`keys`: its own keys that are written; for an array, their number).
 */
function frozenData(v, keys) {
  const proto = Object.getPrototypeOf(v);
  // A class's prototype may gain a toJSON later; the built-in ones are watched.
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return false;
  if (!Object.isFrozen(v)) return false;
  const indices = typeof keys === "number";
  for (let i = 0; i < (indices ? keys : keys.length); i++) {
    const d = Object.getOwnPropertyDescriptor(v, indices ? i : keys[i]);
    if (d === undefined || d.get !== undefined || d.set !== undefined) return false;
  }
  return true;
}

/**
 * Writes `v` as JSON.stringify would see it (toJSON honoured, undefined and
 * functions skipped). `key` is set for the value of a request's message key;
 * `answered`: `v` is what a toJSON answered (called once per value, as
 * JSON.stringify calls it, never on its own answer).
 */
function value(v, depth, path, key, answered = false) {
  switch (typeof v) {
    case "string":
      seen?.push(v);
      word(4);
      string(v);
      return;
    case "number":
      seen?.push(v);
      if (!Number.isFinite(v)) {
        word(0);
        return;
      }
      // Its JSON text (as JSON.stringify writes it): wasm copies it into an
      // edited message as it is, and reads the value only where it needs one.
      word(3);
      string(String(v));
      return;
    case "boolean":
      seen?.push(v);
      word(v ? 2 : 1);
      return;
    case "bigint":
      throw invalid(`${path}: a BigInt cannot be part of a chat message (convert it to a number or a string)`);
    case "object": {
      if (v === null) {
        seen?.push(null);
        word(0);
        return;
      }
      if (depth >= MAX_DEPTH) throw invalid(`${path}: nested deeper than ${MAX_DEPTH} levels; flatten the data or check for a cycle`);
      if (!answered && typeof v.toJSON === "function") {
        frozen = false;
        value(v.toJSON(), depth + 1, path, key, true);
        return;
      }
      if (Array.isArray(v)) {
        // Its length is read once (as JSON.stringify does), whatever a Proxy answers later.
        const n = v.length;
        if (n > MAX_ITEMS) throw invalid(`${path}: an array of ${n} items is more than the ${MAX_ITEMS} this library reads`);
        if (frozen && !frozenData(v, n)) frozen = false;
        seen?.push(ARRAY, n);
        word(5);
        word(n);
        const spanAt = nWords;
        word(0);
        // Name the message in errors (`messages[3]: …`, in every format, as the
        // Rust side names them); deeper levels keep that name.
        const named = depth === 0 || key !== undefined;
        if (depth === 0) readMessages = v;
        else if (named) readKeys.set(key, v);
        // A message array's items are read once, before the cache decides on it.
        const items = named ? readItems(v, n) : v;
        const outerCaching = caching;
        if (named && onceSeen) caching &&= seenBefore(items);
        const entries = named && caching ? [] : undefined;
        if (named) entriesOf.set(v, entries);
        const outerHistory = writingHistory;
        writingHistory = named && historyItems === undefined && caching;
        if (writingHistory) [historyItems, historyArray] = [items, v];
        for (let i = 0; i < n; i++) {
          const item = items[i];
          if (skipped(item)) {
            flush();
            seen?.push(item);
            word(0);
            entries?.push(undefined);
          } else if (named) {
            // Written whether or not the cache keeps it (`entries?.push(message(…))`
            // would skip the call itself when `entries` is undefined).
            const entry = message(item, depth + 1, i);
            entries?.push(entry);
          } else value(item, depth + 1, path);
        }
        caching = outerCaching;
        writingHistory = outerHistory;
        flush();
        words[spanAt] = nWords - spanAt - 1;
        return;
      }
      seen?.push(OBJECT);
      word(6);
      const countAt = nWords;
      word(0);
      word(0);
      let count = 0;
      const keys = Object.keys(v);
      if (frozen && !frozenData(v, keys)) frozen = false;
      for (const k of keys) {
        const item = v[k];
        if (skipped(item)) continue;
        seen?.push(k);
        string(k);
        if (depth === 0 && MESSAGE_KEYS.includes(k)) {
          if (!readKeys.has(k)) readKeys.set(k, item);
          value(item, depth + 1, k, k);
        } else {
          value(item, depth + 1, path);
        }
        count++;
      }
      words[countAt] = count;
      words[countAt + 1] = nWords - countAt - 2;
      seen?.push(END);
      return;
    }
    default:
      seen?.push(v);
      word(0);
  }
}

/**
 * What each message was when it was written, to tell whether it changed since:
 * the sequence of its values as `value` walks them (every string, number,
 * boolean, null and key, with a mark where an array — and its length — or an
 * object starts and where an object ends). A cached message is taken only when
 * a walk finds the same sequence, compared by identity (the same string object
 * costs one comparison, however long; an equal new one is compared by content),
 * so any change that `JSON.stringify` would show is seen. Each message has an
 * array of its own (`seen` while it is written), so that what the cache keeps
 * of a message lives no longer than the message; nothing else is recorded
 * (`seen` is undefined outside a message the cache takes).
 */
let seen;
const ARRAY = Symbol("array");
const OBJECT = Symbol("object");
const END = Symbol("end");
/**
 * Where `v` stops walking as the sequence `recorded` does from `at` on: the
 * position after it, or -1 where it differs (a shape `value` rejects differs).
 * The state travels in the arguments: module variables cost a context load
 * each (−10% on the walk, measured on the synthetic history).
 */
function unchanged(v, recorded, at, depth, answered) {
  if (v === null || typeof v !== "object") {
    const r = recorded[at];
    return r === v || (v !== v && r !== r) ? at + 1 : -1; // NaN is NaN
  }
  if (depth >= MAX_DEPTH) return -1;
  if (!answered && typeof v.toJSON === "function") return unchanged(v.toJSON(), recorded, at, depth + 1, true);
  if (Array.isArray(v)) {
    const n = v.length;
    if (n > MAX_ITEMS || recorded[at] !== ARRAY || recorded[at + 1] !== n) return -1;
    at += 2;
    for (let i = 0; i < n && at >= 0; i++) at = unchanged(v[i], recorded, at, depth + 1, false);
    return at;
  }
  if (recorded[at++] !== OBJECT) return -1;
  // The keys `value` writes, no others (`for…in` would also see a prototype's).
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const item = v[k];
    if (skipped(item)) continue;
    if (recorded[at] !== k) return -1;
    at = unchanged(item, recorded, at + 1, depth + 1, false);
    if (at < 0) return -1;
  }
  return recorded[at] === END ? at + 1 : -1;
}

/**
 * Each message object's cached segment: `{seen, frozen, depth, words, bytes, remapped}`
 * (its tape, position-independent, see src/json/tape.rs; `frozen`: it can never
 * change; `depth`: the deepest it was found within the nesting limit, which
 * counts from the root) and, once wasm read it, `by` (the tokenizer) and `record` (see
 * src/memo.rs). Kept while the caller holds the message.
 */
const segments = new WeakMap();

/** A message array's `n` items, each read once. */
function readItems(v, n) {
  const items = new Array(n);
  for (let i = 0; i < n; i++) items[i] = v[i];
  return items;
}

/**
 * Messages a call that keeps only what it has seen (a compaction, `validate`)
 * found at positions 1, 2, 4, 8, … of a history (0 for a history of one), for
 * `seenBefore`.
 */
const sighted = new WeakSet();

/**
 * Whether a compaction keeps this history's messages in the cache: only once a
 * later call finds one of them at one of those positions again (or cached).
 * Keeping a message costs a call more than reading it, and a compaction is
 * often the only call on its objects — the request a server parses and
 * compacts, a CLI's file — so such a history keeps nothing. A chat UI's history
 * is kept from its second compaction on, or from its first meter (`measure` and
 * `estimateTokens` keep what they read: a meter is redrawn every turn, and a
 * compaction often follows it, as in the Worker proxy). A head object made anew
 * for each call (a system prompt) or a constant one shared by every request
 * decides nothing (position 0 is not looked at).
 */
function seenBefore(items) {
  const one = items.length === 1;
  for (let i = one ? 0 : 1; i < items.length; i = one ? Infinity : 2 * i) {
    const m = items[i];
    if (m === null || typeof m !== "object") continue;
    if (sighted.has(m) || segments.has(m)) return true;
    sighted.add(m);
  }
  return false;
}

/**
 * Cached segments that lay one after another in the same slab (written by one
 * call, in order), waiting to be copied with one `set` for their words and one
 * for their bytes: `{words, bytes, w0, w1, b0, b1, inner}`. The segment headers
 * between them come along and get their new bases (`inner`: the segments after
 * the first). Anything else written into the messages array first flushes it.
 */
let run;

/** Appends a cached segment (header included) to the run, or starts a new run. */
function copy(cached) {
  remapped ||= cached.remapped;
  const r = run;
  if (r !== undefined && cached.words === r.words && cached.bytes === r.bytes && cached.w0 === r.w1 + 2 && cached.b0 === r.b1) {
    r.w1 = cached.w1;
    r.b1 = cached.b1;
    r.inner.push(cached);
    return;
  }
  flush();
  word(7);
  word(nBytes);
  run = { words: cached.words, bytes: cached.bytes, w0: cached.w0, w1: cached.w1, b0: cached.b0, b1: cached.b1, inner: [] };
}

/** Copies the run. Short runs are copied in a loop: `set` costs more below ~100 elements. */
function flush() {
  const r = run;
  if (r === undefined) return;
  run = undefined;
  const { w0, w1, b0, b1 } = r;
  const [w, b] = [r.words, r.bytes];
  const [atWords, atBytes] = [nWords, nBytes];
  if (nWords + w1 - w0 > words.length) words = grow(words, nWords + w1 - w0);
  if (w1 - w0 < 100) for (let i = w0; i < w1; i++) words[nWords++] = w[i];
  else {
    words.set(w.subarray(w0, w1), nWords);
    nWords += w1 - w0;
  }
  for (const e of r.inner) words[atWords + e.w0 - w0 - 1] = atBytes + e.b0 - b0;
  if (nBytes + b1 - b0 > bytes.length) bytes = grow(bytes, nBytes + b1 - b0);
  if (b1 - b0 < 100) for (let i = b0; i < b1; i++) bytes[nBytes++] = b[i];
  else {
    bytes.set(b.subarray(b0, b1), nBytes);
    nBytes += b1 - b0;
  }
}

/**
 * Segments written this call (cache entries still pointing into the scratch
 * buffers). `settle` moves them, all at once, into two arrays of their own: one
 * allocation a call instead of two a message, which is what a cold call on
 * thousands of messages would otherwise spend its time on. Only the fresh
 * segments are copied, those that lie one after another together: what lies
 * between them was copied from the cache, and a slab that spanned it too kept
 * a copy of the whole history alive for each message written fresh (a head
 * object made anew for every call, with one message appended: memory grew with
 * the square of the history).
 */
let fresh = [];

function settle() {
  if (fresh.length === 0) return;
  // Runs of segments that follow one another (their headers between them).
  const ranges = [];
  let [nw, nb] = [0, 0];
  for (const e of fresh) {
    const last = ranges.at(-1);
    if (last !== undefined && e.w0 === last.w1 + 2 && e.b0 === last.b1) {
      [last.w1, last.b1] = [e.w1, e.b1];
    } else {
      ranges.push({ w0: e.w0, w1: e.w1, b0: e.b0, b1: e.b1 });
    }
  }
  for (const r of ranges) {
    nw += r.w1 - r.w0;
    nb += r.b1 - r.b0;
  }
  const [ownWords, ownBytes] = [new Uint32Array(nw), new Uint8Array(nb)];
  let [aw, ab, k] = [0, 0, 0];
  for (const r of ranges) {
    ownWords.set(words.subarray(r.w0, r.w1), aw);
    ownBytes.set(bytes.subarray(r.b0, r.b1), ab);
    for (; k < fresh.length && fresh[k].w1 <= r.w1; k++) {
      const e = fresh[k];
      e.words = ownWords;
      e.bytes = ownBytes;
      e.w0 += aw - r.w0;
      e.w1 += aw - r.w0;
      e.b0 += ab - r.b0;
      e.b1 += ab - r.b0;
    }
    aw += r.w1 - r.w0;
    ab += r.b1 - r.b0;
  }
  fresh = [];
}

/**
 * A getter, Proxy trap or toJSON of the caller's that threw while `path` was
 * read, as INVALID_INPUT naming it (and `what` it was reading), with the
 * caller's error as `cause`.
 */
function readingFailed(e, path, what = "the message") {
  if (e instanceof CompactionError) return e;
  return new CompactionError("INVALID_INPUT", `${path}: reading ${what} threw: ${said(e)}`, { cause: e });
}

/**
 * Writes one message as a segment: copied from the cache when it walks as it
 * was written (or, for the meter, a stub), else written (and cached). Returns
 * its cache entry (undefined: not cached). `index`: its place in the message
 * array (errors name it).
 */
function message(v, depth, index) {
  const cacheable = caching && v !== null && typeof v === "object";
  const held = writingHistory && index === refs && heldItems !== undefined && heldItems[index] === v;
  const cached = held ? heldEntries[index] : cacheable ? segments.get(v) : undefined;
  if (cached !== undefined) {
    // A frozen message cannot have changed: no walk to take (unless it now lies
    // deeper than it was written, where the walk checks the nesting limit).
    let same = cached.frozen && trustFrozen && depth <= cached.depth;
    if (!same) {
      try {
        same = unchanged(v, cached.seen, 0, depth, false) === cached.seen.length;
      } catch (e) {
        throw readingFailed(e, `messages[${index}]`);
      }
      // the walk found it within the nesting limit this deep too
      if (same && depth > cached.depth) cached.depth = depth;
    }
    if (same) {
      if (held) {
        // Held by the session: one word, and wasm takes its view as it is
        // (with the stand-ins for lone surrogates its text was read with).
        remapped ||= cached.remapped;
        flush();
        word(9);
        refs++;
      } else if (stubBy !== undefined && cached.by === stubBy && (cached.record[0] & RECORD_STUB) !== 0) {
        // Known to the meter: one word instead of the message (src/memo.rs).
        flush();
        word(8);
        stubsWritten++;
      } else copy(cached);
      return cached;
    }
  }
  flush();
  const path = `messages[${index}]`;
  const outerBase = base;
  const outerRemapped = remapped;
  try {
    word(7);
    word(nBytes);
    const startWords = nWords;
    const startBytes = nBytes;
    base = nBytes;
    remapped = false;
    // Whether it is frozen, and what it was, matter only to the cache.
    frozen = cacheable;
    seen = cacheable ? [] : undefined;
    value(v, depth, path);
    if (cacheable) {
      const entry = { seen, frozen, depth, words, bytes, w0: startWords, w1: nWords, b0: startBytes, b1: nBytes, remapped, by: undefined, record: undefined };
      segments.set(v, entry);
      fresh.push(entry);
      return entry;
    }
    return undefined;
  } catch (e) {
    throw readingFailed(e, path);
  } finally {
    frozen = false;
    base = outerBase;
    seen = undefined; // nothing is recorded outside a message
    remapped ||= outerRemapped;
  }
}

/** Lets go of scratch buffers a very large history grew, so they are not held forever. */
function release() {
  // A call made from inside the caller's getter runs while the outer one still writes.
  if (encoding) return;
  if (bytes.length > 1 << 24) bytes = new Uint8Array(1 << 16);
  if (words.length > 1 << 22) words = new Uint32Array(1 << 14);
  if (knownScratch.length > 1 << 20) knownScratch = new Float64Array(1 << 12);
}

/**
 * Encodes `input` into the scratch buffers; returns the two views to pass to
 * wasm, the message array as read, the request key it was read from (undefined
 * for an array), whether lone surrogates were hidden, the messages' cache
 * entries, the history's items (for the session), the messages sent as
 * `earlier` nodes and the stubs written. `cache`: whether messages come from
 * and go to the per-message cache (`true`), not (`false`), or only once the
 * history was seen before (`"once seen"`, see `seenBefore`); `stubTokenizer`:
 * the tokenizer of the records a stub may stand on (undefined: no stubs);
 * `held`: the session (its items and their entries) whose messages may go as
 * `earlier` nodes. A call made from inside the caller's getter or toJSON
 * (re-entrant) encodes into buffers of its own and leaves the outer encoding
 * as it was.
 */
function tape(input, what, cache = "once seen", stubTokenizer = undefined, held = undefined) {
  if (input === undefined) {
    throw invalid(`${what}: expected ${EXPECTED_INPUT}, got undefined`);
  }
  if (encoding) return nested(input, what, cache, stubTokenizer);
  heldItems = held?.items;
  heldEntries = held?.entries;
  refs = 0;
  historyItems = historyArray = undefined;
  writingHistory = false;
  stubsWritten = 0;
  nWords = 0;
  nBytes = 0;
  base = 0;
  readMessages = undefined;
  readKeys = new Map();
  entriesOf = new Map();
  remapped = false;
  caching = cache !== false;
  onceSeen = cache === "once seen";
  stubBy = stubTokenizer;
  run = undefined;
  trustFrozen = !("toJSON" in Array.prototype);
  frozen = false; // tracked inside messages only
  seen = undefined; // recorded inside messages only (a nested call's own values stay out of the outer message's)
  encoding = true;
  try {
    try {
      // A root with toJSON is read as what it answers (its message array is the history).
      const root = input !== null && typeof input === "object" && typeof input.toJSON === "function" ? input.toJSON() : input;
      value(root, 0, what, undefined, root !== input);
    } catch (e) {
      throw readingFailed(e, what);
    }
  } finally {
    encoding = false;
    seen = undefined;
    heldItems = heldEntries = undefined; // nothing of the session outlives the call's writing
    settle();
  }
  const views = [words.subarray(0, nWords), bytes.subarray(0, nBytes)];
  // A request's messages are under the first message key it has (as wasm reads it).
  const key = readMessages === undefined ? MESSAGE_KEYS.find((k) => readKeys.has(k)) : undefined;
  const messages = readMessages ?? (key === undefined ? input : readKeys.get(key));
  const entries = entriesOf.get(messages);
  readKeys = new Map();
  entriesOf = new Map();
  // (the session holds the array wasm reads the messages from)
  const items = historyArray === messages ? historyItems : undefined;
  historyItems = historyArray = undefined;
  return { views, messages, key, remapped, entries, items, refs, stubs: stubsWritten };
}

/** `tape` while another encoding is under way: fresh buffers, the outer state restored. */
function nested(input, what, cache, stubTokenizer) {
  const outer = [words, bytes, nWords, nBytes, base, readMessages, readKeys, entriesOf, remapped, caching, onceSeen, stubBy, run, fresh, seen, frozen, trustFrozen, heldItems, heldEntries, refs, historyItems, historyArray, writingHistory, stubsWritten];
  fresh = [];
  words = new Uint32Array(1 << 10);
  bytes = new Uint8Array(1 << 12);
  encoding = false;
  try {
    const t = tape(input, what, cache, stubTokenizer);
    return { ...t, views: t.views.map((v) => v.slice()) };
  } finally {
    encoding = true;
    [words, bytes, nWords, nBytes, base, readMessages, readKeys, entriesOf, remapped, caching, onceSeen, stubBy, run, fresh, seen, frozen, trustFrozen, heldItems, heldEntries, refs, historyItems, historyArray, writingHistory, stubsWritten] = outer;
  }
}

/** A value from wasm with the lone surrogates the tape hid put back. */
function restore(v) {
  if (typeof v === "string") return restoreString(v);
  if (Array.isArray(v)) return v.map(restore);
  if (v !== null && typeof v === "object") {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[restoreString(k)] = restore(x);
    return out;
  }
  return v;
}

// Whether the wasm module answered once: `chat-compaction/init` leaves it to the
// caller, and a call before `initialize` would otherwise fail inside the glue.
let ready = false;

function ensureReady() {
  if (ready) return;
  try {
    raw.parseConfigEntries("[]");
    // The name tables' hash takes a secret seed, so that no request can be
    // written to make them slow (src/names.rs).
    const [low, high] = crypto.getRandomValues(new Uint32Array(2));
    raw.seedTables(low, high);
    ready = true;
  } catch (cause) {
    throw new CompactionError(
      "NOT_INITIALIZED",
      "the wasm module is not initialized: with chat-compaction/init, call `await initialize(source)` (a URL to the .wasm, a fetch Response, its bytes or a WebAssembly.Module) or `initializeSync(bytesOrModule)` first",
      { cause },
    );
  }
}

/** The `ok` of an envelope; an error envelope throws. */
function unwrap(envelope) {
  const parsed = JSON.parse(envelope);
  if (parsed.error) throw new CompactionError(parsed.error.code, parsed.error.message);
  return parsed.ok;
}

// Keys the JS layer handles itself; everything else goes to wasm for validation.
const JS_ONLY = new Set(["summarize", "signal", "countTokens", "count_tokens", "timeoutMs", "timeout_ms", "cache", "force"]);

/** A getter or Proxy trap of the caller's options that threw, as INVALID_CONFIG. */
const optionsThrew = (cause) => new CompactionError("INVALID_CONFIG", `options: reading them threw: ${said(cause)}`, { cause });

/**
 * INVALID_CONFIG unless `options` is a plain object (`expected`: what to say it
 * should be). A revoked Proxy throws even `Array.isArray`: INVALID_CONFIG too.
 */
function expectOptionsObject(options, expected) {
  let array;
  try {
    array = Array.isArray(options);
  } catch (cause) {
    throw optionsThrew(cause);
  }
  if (typeof options !== "object" || array) {
    throw new CompactionError("INVALID_CONFIG", `options: expected ${expected}, got ${array ? "an array" : typeof options}`);
  }
}

/** `options[key]` (a getter that throws is INVALID_CONFIG). */
function readOption(options, key) {
  try {
    return options?.[key];
  } catch (cause) {
    throw optionsThrew(cause);
  }
}

function optionsJson(options, tokenizer = undefined) {
  if (options === undefined || options === null) return tokenizer === undefined ? "" : JSON.stringify({ tokenizer });
  expectOptionsObject(options, "an object");
  let entries;
  try {
    entries = Object.entries(options);
  } catch (cause) {
    throw optionsThrew(cause);
  }
  for (const [key, v] of entries) {
    if (typeof v === "number" && !Number.isFinite(v)) {
      throw new CompactionError("INVALID_CONFIG", `${key}: expected a finite number, got ${v}`);
    }
  }
  // Options wasm never sees: two spellings of one are checked here (wasm checks the rest).
  for (const [camel, snake] of [["timeoutMs", "timeout_ms"], ["countTokens", "count_tokens"]]) {
    if (options[camel] != null && options[snake] != null && options[camel] !== options[snake]) {
      throw new CompactionError("INVALID_CONFIG", `${camel} and ${snake} are the same option, given two different values; keep one`);
    }
  }
  if (options.randomIds === true || options.random_ids === true) {
    // wasm has no entropy of its own: hand it a 53-bit seed.
    const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
    options = { ...options, randomSeed: (hi & 0x1fffff) * 2 ** 32 + lo };
  }
  // (a copy for the JSON only: the JS layer reads the caller's object)
  if (tokenizer !== undefined) options = { ...options, tokenizer };
  try {
    return wellFormedJson(options, (key, v) => (key !== "" && JS_ONLY.has(key) ? undefined : v));
  } catch (cause) {
    throw new CompactionError("INVALID_CONFIG", `options: cannot be read (${said(cause)})`, { cause });
  }
}

/**
 * The most tokens a `countTokens` answer may say: 2^40, far above any text, so
 * that sums over a history stay exact (wasm caps each count there; a larger
 * answer is a broken counter, not a count).
 */
const MAX_COUNT = 2 ** 40;

/**
 * The caller's `countTokens`, wrapped so that wasm never sees a throw: a failure
 * answers -1 (wasm then falls back to its estimator) and `check()` rethrows it as
 * a CompactionError with the caller's error as `cause`.
 */
function counter(options) {
  const fn = options?.countTokens ?? options?.count_tokens;
  if (fn === undefined || fn === null) return [undefined, () => {}];
  if (typeof fn !== "function") {
    throw new CompactionError("INVALID_CONFIG", `countTokens: expected a function (text) => number, got ${typeof fn}`);
  }
  let failure;
  const count = (text) => {
    if (failure !== undefined) return -1;
    try {
      const n = fn(text);
      if (typeof n === "number" && n >= 0 && n <= MAX_COUNT) return n;
      if (typeof n?.then === "function") {
        n.then?.(undefined, () => {}); // its rejection, if any, is reported here, not left unhandled
        failure = new TypeError("countTokens returned a Promise; it must answer synchronously (a synchronous tokenizer such as js-tiktoken's encode, or counts computed beforehand)");
      } else {
        failure = new TypeError(`countTokens returned ${typeof n === "string" ? `the string ${JSON.stringify(n)}` : String(n)}; expected a non-negative number up to 2^40 (no text has that many tokens)`);
      }
    } catch (e) {
      failure = e;
    }
    return -1;
  };
  const check = () => {
    if (failure !== undefined) {
      throw new CompactionError("INVALID_CONFIG", `countTokens failed: ${said(failure)}`, { cause: failure });
    }
  };
  return [count, check];
}

/**
 * The options JSON with `pin` given as a function `(message, index) => boolean`
 * turned into the indices it picks from the messages as read. (`pin` is read
 * from the options before the history is written: a call its getter makes
 * then writes into buffers of its own.)
 */
function withPins(opts, pin, messages) {
  if (typeof pin !== "function" || !Array.isArray(messages)) return opts;
  const picked = [];
  let promised = false;
  // The encoded history still lies in the scratch buffers: a call the pin
  // function makes must encode into buffers of its own (as from a getter).
  const outer = encoding;
  encoding = true;
  try {
    messages.forEach((m, i) => {
      const keep = pin(m, i);
      // (a Promise is truthy: it would pin every message)
      if (typeof keep?.then !== "function") {
        if (keep) picked.push(i);
      } else {
        promised = true;
        keep.then?.(undefined, () => {}); // (its rejection, if any, is not left unhandled)
      }
    });
  } catch (cause) {
    throw new CompactionError("INVALID_CONFIG", `pin: the function threw: ${said(cause)}`, { cause });
  } finally {
    encoding = outer;
  }
  if (promised) {
    throw new CompactionError("INVALID_CONFIG", "pin: the function returned a Promise, which would pin every message; it must answer true or false synchronously");
  }
  return JSON.stringify({ ...(opts ? JSON.parse(opts) : {}), pin: picked });
}

const NO_RECORDS = new Float64Array(0);
/**
 * The buffer `known` is built in, reused: a new 100 KB `Float64Array` a call
 * cost a fifth of `knownRecords`. The glue copies it into wasm before anything
 * else runs, so no call can see another's; `release` lets go of one past 8 MB.
 */
let knownScratch = new Float64Array(1 << 12);

/**
 * The tokenizer the cached records of this call are keyed by; undefined when no
 * estimate may come from the cache: a caller's `countTokens` may answer
 * differently later.
 */
function recordsBy(options, tokenizer) {
  const custom = options?.countTokens ?? options?.count_tokens;
  return options?.cache === false || custom != null ? undefined : String(options?.tokenizer ?? tokenizer ?? "o200k");
}

/**
 * Whether records travel for this call: a tokenizer they are keyed by (`by`,
 * see `recordsBy`) and messages the cache takes (`entries`).
 */
const keepsRecords = (by, entries) => by !== undefined && entries !== undefined;

/**
 * The records known for the messages whose cache `entries` the tape writer
 * collected (wasm's `known` layout, see src/memo.rs); none for the first
 * `held`, which the session holds.
 */
function knownRecords(by, entries, held = 0) {
  if (!keepsRecords(by, entries)) return NO_RECORDS;
  let size = 0;
  for (let i = held; i < entries.length; i++) {
    const e = entries[i];
    if (e !== undefined && e.by === by) size += e.record.length;
  }
  if (size === 0) return NO_RECORDS;
  if (knownScratch.length < entries.length + size) knownScratch = new Float64Array(2 * (entries.length + size));
  const known = knownScratch;
  let at = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (i < held || e === undefined || e.by !== by) {
      known[at++] = 0; // not known (the buffer holds an earlier call's records)
      continue;
    }
    const record = e.record;
    // A loop: `set` from a short plain array costs more.
    known[at++] = record.length;
    for (let k = 0; k < record.length; k++) known[at++] = record[k];
  }
  return known.subarray(0, at);
}

/** Keeps the records wasm made in this call (`[index, length, record…]…`) in the messages' cache entries. */
function keepRecords(memo, by, entries) {
  if (memo === undefined || !keepsRecords(by, entries)) return;
  for (let at = 0; at < memo.length; ) {
    const [i, len] = [memo[at], memo[at + 1]];
    const e = entries[i];
    if (e !== undefined) {
      e.by = by;
      e.record = memo.slice(at + 2, at + 2 + len);
    }
    at += 2 + len;
  }
}

/**
 * The tokenizers of well-known models whose counts differ from o200k's, by the
 * longest prefix of the model name (after any `provider/`, in any case): the
 * table of src/request.rs (`MODEL_TOKENIZERS`); tests/fixtures/estimates/models.json
 * holds both to the same answers.
 */
const MODEL_TOKENIZERS = [["claude", "claude"], ["gpt-4", "cl100k"], ["gpt-3.5", "cl100k"], ["gpt-4o", "o200k"], ["gpt-4.1", "o200k"], ["gpt-4.5", "o200k"], ["chatgpt-4o", "o200k"]];

/**
 * The names a model id is matched by (lower case): the id after any `provider/`,
 * and that without a fine-tune's `ft:` and a Bedrock id's region and provider,
 * the dot-ended words of letters before the model (`us.anthropic.claude-…`),
 * as src/request.rs `model_names` has them.
 */
function modelNames(model) {
  const name = model.slice(model.lastIndexOf("/") + 1);
  let bare = /^ft:/i.test(name) ? name.slice(3) : name;
  for (let dot = bare.indexOf("."); dot > 0 && /^[A-Za-z]+$/.test(bare.slice(0, dot)); dot = bare.indexOf(".")) bare = bare.slice(dot + 1);
  return [name.toLowerCase(), bare.toLowerCase()];
}

/**
 * The tokenizer a request's well-known `model` implies when the caller gives
 * none (undefined: the default). Resolved here, not in wasm: the cached records
 * are keyed by the tokenizer before wasm runs. The model is read from the
 * request as it is (a getter once more; a request or model answering through
 * `toJSON` keeps the default).
 */
function modelTokenizer(options, history) {
  // (options that are not an object are refused by `optionsJson`)
  if (readOption(options, "tokenizer") != null) return undefined;
  let model;
  try {
    if (!isRequest(history) || typeof history.toJSON === "function") return undefined;
    model = history.model;
    if (model !== null && typeof model === "object") model = model.modelId;
  } catch {
    return undefined; // (the tape reports what cannot be read)
  }
  if (typeof model !== "string") return undefined;
  let best = ["", "o200k"];
  for (const name of modelNames(model)) {
    for (const entry of MODEL_TOKENIZERS) if (entry[0].length > best[0].length && name.startsWith(entry[0])) best = entry;
  }
  return best[1] === "o200k" ? undefined : best[1];
}

/**
 * Calls a wasm export with the encoded history, the options, `rest`, the
 * caller's counter and the records known. `stubs`: a meter call — known
 * messages may go as stubs (the meter and the total read nothing else of
 * them), and what it reads is kept at once (a compaction keeps a history only
 * once seen, see `seenBefore`); should wasm miss a stub (the history now reads
 * as another format), the call is made again with every message written out.
 */
function call(exportFn, history, options, rest = [], stubs = false, retried = undefined) {
  ensureReady();
  const tokenizer = modelTokenizer(options, history);
  const held = retried === undefined;
  const pin = held ? readOption(options, "pin") : undefined;
  let opts = retried ?? optionsJson(options, tokenizer);
  const [count, check] = counter(options);
  const by = recordsBy(options, tokenizer);
  // The session holds what the records are keyed by, and never a history a
  // call made from inside the caller's getter reads (the outer call's is).
  const sessionBy = encoding ? undefined : by;
  const s = session;
  const usable = held && sessionBy !== undefined && s.by === sessionBy && (stubs || !s.stubbed);
  const written = tape(history, "input", options?.cache === false ? false : stubs || "once seen", stubs ? by : undefined, usable ? s : undefined);
  const { views: [w, b], messages, key, remapped, entries, items, refs } = written;
  if (held) opts = withPins(opts, pin, messages);
  const known = knownRecords(by, entries, refs);
  // Hold the history when the cache takes it (the session's views lean on the cached records).
  const keep = sessionBy !== undefined && items !== undefined && keepsRecords(by, entries);
  if (keep && refs === 0 && s.id !== 0) {
    // A new session starts: the old one's memory first, for this call's tape.
    raw.endSession();
    session = NO_SESSION;
  }
  let envelope;
  try {
    // Records are made in wasm only where they are kept (`by`).
    envelope = exportFn(w, b, opts, ...rest, count, known, keepsRecords(by, entries), s.id, refs, keep);
  } finally {
    release();
  }
  check();
  const parsed = JSON.parse(envelope);
  if (parsed.retry) {
    // Again with every message written; the pins as picked (a pin function runs once).
    if (refs > 0) session = NO_SESSION;
    return call(exportFn, history, options, rest, false, opts);
  }
  if (parsed.session === 0) session = NO_SESSION;
  else if (parsed.session !== undefined) {
    const continued = refs > 0;
    session = { id: parsed.session, items, entries, by, stubbed: written.stubs > 0 || (continued && s.stubbed) };
  }
  // Estimates made before an error (TOO_SMALL_TO_COMPACT, say) are kept too.
  keepRecords(parsed.memo, by, entries);
  if (parsed.error) throw new CompactionError(parsed.error.code, parsed.error.message);
  return { result: remapped ? restore(parsed.ok) : parsed.ok, messages, key };
}

function isRequest(history) {
  return history !== null && typeof history === "object" && !Array.isArray(history);
}

/** The key a request object keeps its messages under: the first of MESSAGE_KEYS it has (as the tape sees it). */
function messageKey(request) {
  const keys = Object.keys(request);
  return MESSAGE_KEYS.find((k) => keys.includes(k) && !skipped(request[k]));
}

/**
 * What a result was made from, kept (not enumerable) for `rebase`: `{source,
 * plan, json}`, the input's messages, the plan (an input index for each
 * message kept verbatim) and, when the compaction awaited a summarizer, each
 * input message's JSON as it started (see `compact`).
 */
const MADE_FROM = Symbol("chat-compaction covered messages");

/** `v` as JSON, or undefined where it cannot be written. */
function jsonOf(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

/**
 * Whether two JSON texts hold the same value, in any key order: a history
 * reloaded from a store that orders keys its own way (Postgres jsonb, say) is
 * the same history. Parsed only when the texts differ. (undefined: a value
 * JSON cannot write, a BigInt or a cycle, is never the same.)
 */
function sameJson(a, b) {
  return a !== undefined && b !== undefined && (a === b || sameData(JSON.parse(a), JSON.parse(b)));
}

function sameData(a, b) {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  const keys = Object.keys(a);
  return Array.isArray(a) === Array.isArray(b) && keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameData(a[k], b[k]));
}

/**
 * The result object: kept messages are the caller's own objects from `source`, a
 * copy of the input's message array that `rebase` compares with later; a
 * request comes back with only its messages (under `key`) replaced.
 */
function resultOf({ plan, notice, summary, warnings }, history, source, key, json = undefined) {
  const messages = plan.map((p) => (typeof p === "number" ? source[p] : p));
  const result = { messages, notice, warnings };
  if (summary !== undefined) result.summary = summary;
  const requestKey = isRequest(history) ? (key ?? messageKey(history)) : undefined;
  if (requestKey !== undefined) result.request = { ...history, [requestKey]: messages };
  Object.defineProperty(result, MADE_FROM, { value: { source, plan, json } });
  return result;
}

/**
 * Compacts a history synchronously with an offline mode (`deterministic`, `recency_preserving`).
 * Returns `{ messages, request?, notice, summary?, warnings }`. Kept messages are the
 * caller's own objects; `history` is never mutated.
 */
export function compactSync(history, options) {
  const { result, messages, key } = call(raw.compactStepTape, history, options, [""]);
  return resultOf(result, history, messages.slice(), key);
}

function optionError(message) {
  return new CompactionError("INVALID_CONFIG", message);
}

/**
 * How long the summarizer calls of one compaction may take together when the
 * options do not say: a summary takes seconds, and an endpoint that hangs must
 * not hold the compaction forever. `timeoutMs: 0` sets no limit.
 */
const DEFAULT_TIMEOUT_MS = 120_000;

/** `summarize`, `signal` and `timeoutMs` of the options, checked. */
function llmOptions(options) {
  const summarize = options?.summarize ?? undefined;
  if (summarize !== undefined && typeof summarize !== "function") {
    throw optionError(`summarize: expected a function (request) => summary, got ${typeof summarize}`);
  }
  const signal = options?.signal ?? undefined;
  if (signal !== undefined && (typeof signal !== "object" || typeof signal.addEventListener !== "function" || typeof signal.aborted !== "boolean")) {
    throw optionError("signal: expected an AbortSignal (new AbortController().signal)");
  }
  const timeoutMs = options?.timeoutMs ?? options?.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  if (!(typeof timeoutMs === "number" && timeoutMs >= 0 && Number.isFinite(timeoutMs))) {
    throw optionError(`timeoutMs: expected a non-negative number of milliseconds (0: no limit), got ${typeof timeoutMs === "number" ? timeoutMs : typeof timeoutMs}`);
  }
  return { summarize, signal, timeoutMs };
}

function aborted(signal) {
  const reason = signal.reason;
  const why = reason === undefined ? "" : `: ${said(reason)}`;
  return new CompactionError("ABORTED", `compaction aborted by the caller's signal${why}; the history was not changed`, { cause: reason });
}

/**
 * One compaction that may await a summarizer: the history is encoded once into
 * buffers of its own (the module's scratch buffers are never held across an
 * await), and the messages are the ones the history held when it started.
 */
class Job {
  constructor(history, options) {
    ensureReady();
    const tokenizer = modelTokenizer(options, history);
    this.options = optionsJson(options, tokenizer);
    [this.count, this.check] = counter(options);
    const pin = readOption(options, "pin");
    const { views, messages, key, remapped, entries } = tape(history, "input", options?.cache === false ? false : "once seen");
    try {
      this.tape = views.map((v) => v.slice());
    } finally {
      release();
    }
    this.options = withPins(this.options, pin, messages);
    // Not an array: wasm reports what is wrong on the first step.
    this.source = Array.isArray(messages) ? messages.slice() : [];
    this.key = key;
    this.remapped = remapped;
    const by = recordsBy(options, tokenizer);
    this.known = () => knownRecords(by, entries);
    this.keeps = keepsRecords(by, entries);
    this.keep = (memo) => keepRecords(memo, by, entries);
  }

  /** The next step for the replies so far: `{ask}` or `{done}`. */
  step(replies, failure) {
    const [w, b] = this.tape;
    let envelope;
    try {
      // (no session: the steps of one compaction await between them, and other calls may run meanwhile)
      envelope = raw.compactStepTape(w, b, this.options, wellFormedJson(replies), this.count, this.known(), this.keeps, 0, 0, false);
    } finally {
      release();
    }
    this.check();
    const parsed = JSON.parse(envelope);
    this.keep(parsed.memo);
    if (parsed.error) {
      const { code, message } = parsed.error;
      throw new CompactionError(code, message, code === "LLM_FAILED" ? { cause: failure } : undefined);
    }
    return this.remapped ? restore(parsed.ok) : parsed.ok;
  }

  /**
   * A summary request whose messages are copies of the caller's, made from
   * `json` (each message's JSON when the compaction started): a summarizer may
   * edit what it is handed, as SDKs and middleware do, without changing the
   * history (`rebase` compares it with that JSON).
   */
  request(ask, signal, json) {
    return { ...ask, messages: ask.messages.map((m) => (typeof m === "number" ? JSON.parse(json[m]) : m)), signal };
  }

  /**
   * Whether a summary streaming in for `ask` is past what the quality check
   * takes (twice `maxTokens`, counted as the check counts it): reading stops
   * there, and the check refuses it as it refuses any summary too long. Counted
   * once the text reaches as many characters as the cap has tokens, then each
   * time its length doubled: linear in the text read, which stops within about
   * twice the length at which it passed the cap.
   */
  overLong(ask) {
    const most = 2 * ask.maxTokens;
    let at = most;
    return (text) => {
      if (text.length < at) return false;
      at = 2 * text.length;
      return this.tokens(text.trim()) > most;
    };
  }

  /** The tokens of `text` by this compaction's counter (its tokenizer, or the caller's `countTokens`). */
  tokens(text) {
    const [w, b] = tape(text, "summary", false).views;
    let envelope;
    try {
      envelope = raw.estimateTokensTape(w, b, this.options, this.count, NO_RECORDS, false, 0, 0, false);
    } finally {
      release();
    }
    this.check();
    return unwrap(envelope);
  }
}

const decoderOptions = { stream: true };

/** Describes a value in an error message. */
function describe(v) {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object without a text string";
  return `${/^[aeiou]/.test(typeof v) ? "an" : "a"} ${typeof v}`;
}

/**
 * Reads what a summarizer returned: a string, `{text, usage?}`, an async iterable
 * or a ReadableStream of strings or bytes (concatenated). Every wait races `stop`,
 * which rejects on abort or timeout; a stream stops being read once
 * `overLong(text)` says so (`cut`), and throws TIMEOUT past `deadline` itself.
 * A stream left unfinished is cancelled.
 */
async function readSummary(value, stop, overLong, deadline) {
  if (typeof value === "string") return { text: value };
  if (value !== null && typeof value === "object") {
    let next;
    let cancel;
    if (typeof value.getReader === "function") {
      const reader = value.getReader();
      next = () => reader.read();
      cancel = () => reader.cancel();
    } else if (typeof value[Symbol.asyncIterator] === "function") {
      const it = value[Symbol.asyncIterator]();
      next = () => it.next();
      cancel = () => it.return?.();
    } else if (typeof value.text === "string") {
      return { text: value.text, usage: value.usage };
    }
    if (next) {
      const decoder = new TextDecoder();
      let text = "";
      let usage;
      let finished = false;
      try {
        for (;;) {
          const { done, value: chunk } = await Promise.race([next(), stop]);
          if (done) {
            finished = true;
            break;
          }
          if (typeof chunk === "string") text += chunk;
          else if (chunk instanceof ArrayBuffer || ArrayBuffer.isView(chunk)) text += decoder.decode(chunk, decoderOptions);
          // a `{usage}` chunk (at the end of a provider's stream) reports the tokens
          else if (chunk !== null && typeof chunk === "object" && typeof chunk.usage === "object") usage = chunk.usage;
          else throw new TypeError(`the summarizer's stream yielded ${describe(chunk).replace(" without a text string", "")}; expected strings, bytes or {usage}`);
          if (overLong(text)) break;
          // (pieces that are all ready at once never let the timer run)
          if (Date.now() >= deadline) throw TIMEOUT;
        }
      } finally {
        if (!finished) Promise.resolve().then(cancel).catch(() => {});
      }
      return { text: text + decoder.decode(), usage, cut: !finished };
    }
  }
  throw new TypeError(`the summarizer returned ${describe(value)}; expected a string, {text, usage?}, an async iterable or a ReadableStream`);
}

const ABORT = Symbol("abort");
const TIMEOUT = Symbol("timeout");

/**
 * Calls the summarizer once. Resolves to `{reply, error}`: the reply wasm reads
 * (`{text, usage?}` or `{failed, reason}`) and the caller's original error, if any.
 * Rejects only with ABORTED when the caller's signal fires.
 */
const MAX_DELAY = 2 ** 31 - 1;

async function ask(summarize, request, { signal, timeoutMs }, deadline, overLong) {
  const controller = new AbortController();
  let timer;
  let onAbort;
  const stop = new Promise((_, reject) => {
    onAbort = () => reject(ABORT);
    signal?.addEventListener("abort", onAbort, { once: true });
    // Timers take at most 2^31 − 1 ms (a longer delay fires at once): re-armed in steps.
    const arm = () => {
      const left = Math.max(0, deadline - Date.now());
      timer = setTimeout(left > MAX_DELAY ? arm : () => reject(TIMEOUT), Math.min(left, MAX_DELAY));
    };
    if (deadline !== undefined) arm();
  });
  stop.catch(() => {});
  try {
    const value = await Promise.race([Promise.resolve().then(() => summarize(request(controller.signal))), stop]);
    const { text, usage, cut } = await readSummary(value, stop, overLong, deadline);
    // (a fetch the summarizer made with the request's signal stops too)
    if (cut) controller.abort(new Error("the summary is over twice maxSummaryTokens"));
    return { reply: usage !== null && typeof usage === "object" ? { text, usage: numbersOf(usage) } : { text } };
  } catch (e) {
    if (e === ABORT) {
      controller.abort(signal.reason);
      throw aborted(signal);
    }
    if (e === TIMEOUT) {
      const error = new Error(`the summarizer did not answer within ${timeoutMs} ms (timeoutMs)`);
      error.name = "TimeoutError";
      controller.abort(error);
      return { reply: { failed: "timeout", reason: error.message }, error };
    }
    return { reply: { failed: "error", reason: `the summarizer failed: ${said(e)}` }, error: e };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** The numeric fields of a usage object (wasm reads the names it knows). */
function numbersOf(usage) {
  const out = {};
  for (const [k, v] of Object.entries(usage)) if (typeof v === "number") out[k] = v;
  return out;
}

const LLM_MODES = new Set(["structured", "llm_replace", "llm-replace"]);

/**
 * Compacts a history with any mode. The LLM modes (`structured`, `llm_replace`)
 * call `options.summarize(request)` and may take seconds; `options.signal` aborts
 * (ABORTED, never a fallback) and `options.timeoutMs` (default 120 s, 0: none)
 * limits all summarizer calls together. Kept messages are the caller's own
 * objects; `history` is never mutated.
 */
export async function compact(history, options) {
  let llm, mode;
  try {
    llm = llmOptions(options);
    mode = options?.mode;
  } catch (cause) {
    if (cause instanceof CompactionError) throw cause;
    throw optionsThrew(cause);
  }
  if (LLM_MODES.has(mode) && llm.summarize === undefined) {
    throw new CompactionError("SUMMARIZER_REQUIRED", `mode ${JSON.stringify(mode)} writes its summary with an LLM: pass a summarize function, e.g. compact(history, { mode: ${JSON.stringify(mode)}, summarize: async (request) => callYourModel(request) })`);
  }
  if (llm.signal?.aborted) throw aborted(llm.signal);
  const job = new Job(history, options);
  // While a summarizer runs, a chat UI streams and edits into the same message
  // objects: `rebase` compares them with what they were as JSON (a cost next to
  // an LLM call's; an offline mode's history cannot change during the call).
  const json = LLM_MODES.has(mode) ? job.source.map(jsonOf) : undefined;
  const deadline = llm.timeoutMs === 0 ? undefined : Date.now() + llm.timeoutMs;
  const replies = [];
  let failure;
  for (;;) {
    // An abort between two answers (or with the last one) still rejects: an
    // "abort" event fired before `ask` listens is never heard again.
    if (llm.signal?.aborted && replies.length > 0) throw aborted(llm.signal);
    const step = job.step(replies, failure);
    if (step.done) return resultOf(step.done, history, job.source, job.key, json);
    const { reply, error } = await ask(llm.summarize, (signal) => job.request(step.ask, signal, json), llm, deadline, job.overLong(step.ask));
    replies.push(reply);
    failure = error;
  }
}

/**
 * Splices the messages that arrived while a compaction ran onto its result: the
 * compacted history followed by every message of `currentHistory` past the
 * `result.notice.messagesBefore` it covered. A message the result keeps
 * verbatim is taken as it is now (a reply may still be streaming into it).
 * Throws STALE_HISTORY (and changes nothing) when a message the summary or
 * marker covers was edited or removed since, or when an appended (or changed
 * kept) tool result answers a call the compaction removed.
 */
export function rebase(result, currentHistory) {
  let made, compacted, format;
  try {
    made = result?.[MADE_FROM];
    compacted = result?.messages;
    format = result?.notice?.format;
  } catch (e) {
    throw readingFailed(e, "result", "it");
  }
  if (made === undefined || !Array.isArray(compacted)) {
    throw invalid("result: expected the object compact() or compactSync() returned (it remembers the messages it covered; a copy or a JSON round trip does not)");
  }
  const { source: covered, plan, json } = made;
  const stale = (message) => new CompactionError("STALE_HISTORY", `${message}; compact the current history again`);
  let key, request, messages;
  // The first message of the answer that is not as the compaction saw it: from
  // there on, results must answer calls the answer holds.
  let first = compacted.length;
  try {
    key = isRequest(currentHistory) ? messageKey(currentHistory) : undefined;
    // (the request's fields read once, for the answer)
    request = key === undefined ? undefined : { ...currentHistory };
    const current = key === undefined ? currentHistory : request[key];
    if (!Array.isArray(current)) {
      const what = (v) => (isRequest(v) ? "an object" : describe(v));
      const got = key !== undefined ? `a request whose "${key}" is ${what(current)}` : isRequest(currentHistory) ? "an object without any of them" : what(currentHistory);
      throw invalid(`currentHistory: expected ${EXPECTED_INPUT}, got ${got}`);
    }
    if (current.length < covered.length) {
      throw stale(`the history has ${current.length} messages, fewer than the ${covered.length} the compaction covered: messages were removed since it started`);
    }
    const keptAt = new Map();
    plan.forEach((p, at) => typeof p === "number" && keptAt.set(p, at));
    for (let i = 0; i < covered.length; i++) {
      // (a message that cannot be read as JSON now, a BigInt or a cycle, changed)
      const now = current[i];
      const same = json?.[i] !== undefined ? sameJson(jsonOf(now), json[i]) : now === covered[i] || sameJson(jsonOf(now), jsonOf(covered[i]));
      if (same) continue;
      if (!keptAt.has(i)) throw stale(`messages[${i}] changed since the compaction started`);
      first = Math.min(first, keptAt.get(i));
    }
    messages = [...compacted.map((m, at) => (typeof plan[at] === "number" ? current[plan[at]] : m)), ...current.slice(covered.length)];
  } catch (e) {
    // (a getter or Proxy trap of the caller's that throws)
    throw readingFailed(e, "currentHistory", "it");
  }
  if (first < messages.length) {
    // Only the turn before that message can be answered by what follows.
    let from = first;
    try {
      while (from > 0 && !isPlainTurn(messages[from - 1], format)) from--;
    } catch (e) {
      throw readingFailed(e, `the compacted messages[${from - 1}]`);
    }
    from = Math.max(0, from - 1);
    try {
      call(raw.checkSeamTape, messages.slice(from), { format, cache: false }, [first - from]);
    } catch (e) {
      // The seam's message numbers as the caller's: an appended or kept one's
      // place in `currentHistory` (the cause, a getter's error, kept).
      if (!(e instanceof CompactionError)) throw e;
      const place = (at) => (at >= compacted.length ? covered.length + at - compacted.length : plan[at]);
      const message = e.message.replace(/^messages\[(\d+)\]/, (whole, n) => {
        const at = from + Number(n);
        return typeof place(at) === "number" ? `messages[${place(at)}]` : `the compacted messages[${at}]`;
      });
      throw new CompactionError(e.code, message, "cause" in e ? { cause: e.cause } : undefined);
    }
  }
  if (request !== undefined) request[key] = messages;
  return request ?? messages;
}

/**
 * Whether a message starts a turn in `format`: a person's message, not a tool
 * result nor one more item of an assistant turn. Walking back to one takes in
 * every call that a message appended later may answer.
 */
function isPlainTurn(m, format) {
  if (m === null || typeof m !== "object") return true;
  switch (format) {
    case "openai-responses":
      // Items of a turn (reasoning, calls, outputs, the reply) follow a user message item.
      return (m.type === undefined || m.type === "message") && m.role === "user";
    case "gemini":
      // A user turn that answers calls holds functionResponse parts (role "function" in older APIs).
      return m.role !== "model" && m.role !== "function" && !(Array.isArray(m.parts) && m.parts.some((p) => p?.functionResponse !== undefined));
    case "ai-sdk-ui":
      // Results live in the calling message's own tool parts: every message stands alone.
      return true;
    default:
      // openai, moltis, ai-sdk (role "tool"), anthropic (tool_result blocks in a user message)
      if (m.role === "tool" || m.role === "tool_result" || m.role === "notice") return false;
      return !(Array.isArray(m.content) && m.content.some((b) => b?.type === "tool_result"));
  }
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/**
 * Meters and compacts JSON text or bytes in wasm (`answer`: 0 when over the
 * threshold, 1 always, 2 the whole result as JSON). Answers the envelope's
 * `ok` and the bytes written (a view into the answer).
 */
function compactText(input, options, answer) {
  let bytes;
  if (typeof input === "string") bytes = textEncoder.encode(input);
  else if (input instanceof Uint8Array) bytes = input;
  else if (input instanceof ArrayBuffer || ArrayBuffer.isView(input)) bytes = new Uint8Array(input.buffer ?? input, input.byteOffset ?? 0, input.byteLength);
  else throw invalid(`input: expected JSON text (a string, a Uint8Array or an ArrayBuffer), got ${input === null ? "null" : typeof input}`);
  ensureReady();
  const [count, check] = counter(options);
  // (wasm resolves the tokenizer a request's model implies: nothing is cached here)
  const out = raw.compactText(bytes, optionsJson(options), answer, count);
  check();
  const length = out[0] | (out[1] << 8) | (out[2] << 16) | (out[3] << 24);
  const ok = unwrap(textDecoder.decode(out.subarray(4, 4 + length)));
  return { ok, written: out.subarray(4 + length) };
}

/**
 * Decides and compacts a request (or history) held as JSON text or bytes, in
 * one call and without building JS objects of it: `{body, compacted, meter,
 * notice?, summary?, warnings}`. Under the threshold (`meter.shouldCompact`
 * false, unless `options.force`) `body` is the caller's own input and
 * `compacted` false; over it, `body` is the compacted JSON (a string for a
 * string input, else a Uint8Array) in which every kept message and every other
 * field are the input's bytes as they were. Offline modes only.
 */
export function compactBody(body, options) {
  const force = readOption(options, "force") === true;
  const { ok, written } = compactText(body, options, force ? 1 : 0);
  const { meter, compaction } = ok;
  if (compaction === undefined) return { body, compacted: false, meter, warnings: meter.warnings };
  // (`written` is a view of a copy the glue made out of wasm memory: it is ours)
  const out = typeof body === "string" ? textDecoder.decode(written) : written;
  const result = { body: out, compacted: true, meter, notice: compaction.notice, warnings: compaction.warnings };
  if (compaction.summary !== undefined) result.summary = compaction.summary;
  return result;
}

/**
 * The context meter of a request (or history) held as JSON text or bytes, read
 * in wasm in one pass (no JSON.parse): what `measure` answers for its objects.
 */
export function measureBody(body, options) {
  return compactText(body, options, 3).ok.meter;
}

/**
 * For callers that hold the history as JSON text and want JSON text back: the
 * result (`{messages, notice, warnings, summary?, request?}`) as JSON text,
 * read and written in wasm: kept messages, and a request's other fields, are
 * the input's bytes.
 */
export function compactJsonString(json, options) {
  if (typeof json !== "string") {
    throw invalid(`input: expected JSON text, got ${json === null ? "null" : typeof json}`);
  }
  return textDecoder.decode(compactText(json, options, 2).written);
}

/** Estimated tokens of a text, or of a whole history (array or request object). */
export function estimateTokens(input, options) {
  if (typeof input !== "string" && (input === null || typeof input !== "object")) {
    throw invalid(`input: expected a text, ${EXPECTED_INPUT}, got ${describe(input)}`);
  }
  return call(raw.estimateTokensTape, input, options, [], true).result;
}

/**
 * Checks a history (array or request object) against the pairing and ordering
 * rules its provider enforces with a 400: `{format, violations: [{index, code,
 * message}]}`, empty when it is valid. `options`: `{format?, provider?,
 * strictAlternation?}`. A request object is about to be sent, so its newest
 * calls must be answered; in an array they may still be running.
 */
export function validate(history, options) {
  let opts = "{}";
  let cache = "once seen";
  if (options !== undefined && options !== null) {
    expectOptionsObject(options, "an object {format?, provider?, strictAlternation?, cache?} (or a compaction's options)");
    try {
      // `cache` is the JS layer's, as for every other call
      opts = JSON.stringify(options, (key, v) => {
        if (key !== "cache") return v;
        if (v === false) cache = false;
        return undefined;
      });
    } catch (cause) {
      throw new CompactionError("INVALID_CONFIG", `options: cannot be read (${said(cause)})`, { cause });
    }
  }
  ensureReady();
  const { views: [w, b], remapped } = tape(history, "input", cache);
  let envelope;
  try {
    envelope = raw.validateTape(w, b, opts);
  } finally {
    release();
  }
  const result = unwrap(envelope);
  return remapped ? restore(result) : result;
}

/**
 * The context meter: the next request's estimated tokens (history, system prompt
 * held apart, tool definitions, `pendingText`) against the window and the
 * threshold, with each message's tokens in `perMessage`.
 */
export function measure(history, options, pendingText = "") {
  return call(raw.measureTape, history, options, [pending(pendingText), false], true).result;
}

/** `pendingText` as text (a number as its digits); a value that has none is INVALID_INPUT. */
function pending(text) {
  try {
    return String(text ?? "");
  } catch (cause) {
    throw new CompactionError("INVALID_INPUT", "pendingText: expected a string, got a value that cannot be read as text", { cause });
  }
}

/**
 * Decides and compacts in one read of the history: `{compacted, meter,
 * result?}`. Over the auto-compact threshold (history + `pendingText`), `result`
 * is what `compactSync` answers (an offline mode); under it, nothing is
 * compacted. What a server or an agent loop that holds the objects calls before
 * each request: it costs one pass, as a first compaction does (no meter call, no
 * second read, and `result.notice.tokensAfter` is the compacted history's count).
 */
export function compactIfNeeded(history, options, pendingText = "") {
  const { result, messages, key } = call(raw.measureTape, history, options, [pending(pendingText), true]);
  if (result.done === undefined) return { compacted: false, meter: result.meter };
  return { compacted: true, meter: result.meter, result: resultOf(result.done, history, messages.slice(), key) };
}

/** Whether the next request (history + `pendingText`) reaches the auto-compact threshold. */
export function shouldCompact(history, options, pendingText = "") {
  return measure(history, options, pendingText).shouldCompact;
}

/**
 * Effective options and warnings from TOML (`[chat.compaction]` of a
 * moltis.toml, or a bare table). Async: the TOML reader loads on the first call.
 */
export async function parseConfig(toml) {
  if (typeof toml !== "string") {
    throw new CompactionError("INVALID_CONFIG", `config: expected TOML text, got ${toml === null ? "null" : typeof toml}`);
  }
  ensureReady();
  const { tomlEntries } = await import("./toml.js");
  const read = tomlEntries(toml);
  if (read.error) {
    const { message, line, column } = read.error;
    throw new CompactionError("INVALID_CONFIG", `invalid TOML (line ${line}, column ${column}): ${message}`);
  }
  const config = unwrap(raw.parseConfigEntries(read.json));
  // Without context_window in the table, the default window would hide the
  // window of a request's model: the options can be passed on as they are.
  if (!config.contextWindowGiven) delete config.options.contextWindow;
  // (and the tokenizer, which the model chooses too)
  if (!config.tokenizerGiven) delete config.options.tokenizer;
  return config;
}
