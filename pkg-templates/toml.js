// Reads a TOML config for `parseConfig`: loaded only when it is called, so the
// TOML parser costs nothing to a caller who never reads a config. The document
// is parsed by smol-toml (bundled in at build time, BSD-3-Clause, see
// THIRD-PARTY-NOTICES) and handed to wasm as entries, every key/value with its
// full path and position (`[path, value, line, column]`): what they mean (the
// [chat.compaction] table, options outside it, types, clamps) is decided in
// wasm, by the same code that reads native callers' TOML (src/options/config.rs).
import { parse, TomlDate, TomlError } from "smol-toml";

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/**
 * The entries of `text` as JSON, or `{error: {message, line, column}}` where
 * it is not valid TOML.
 */
export function tomlEntries(text) {
  let doc;
  try {
    doc = parse(text, { integersAsBigInt: "asNeeded" });
  } catch (e) {
    if (!(e instanceof TomlError)) throw e;
    return { error: { message: e.message.split("\n")[0].replace(/^Invalid TOML document: /, ""), line: e.line, column: e.column } };
  }
  const positions = keyPositions(text);
  const entries = [];
  try {
    walk(doc, [], entries, positions);
  } catch (e) {
    if (e instanceof RangeError) return { error: e.position };
    throw e;
  }
  // In document order (as the native reader lists them), unknown positions last.
  const order = (e) => (e.position ? e.position[0] * 1e6 + e.position[1] : Infinity);
  entries.sort((a, b) => order(a) - order(b));
  return { json: `[${entries.map((e) => e.json).join(",")}]` };
}

const isTable = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof TomlDate);

/** Each key/value of `table` at `path` (a table's keys after its own entry). */
function walk(table, path, entries, positions) {
  for (const key of Object.keys(table)) {
    const here = [...path, key];
    const value = table[key];
    const position = positions.get(JSON.stringify(here));
    let json;
    if (isTable(value)) json = '{"$":"a table"}';
    else if (Array.isArray(value) && value.length > 0 && value.every(isTable)) json = '{"$":"an array of tables"}';
    else json = write(value, position);
    const [line, column] = position ?? [0, 0];
    entries.push({ position, json: `[${JSON.stringify(here)},${json},${line},${column}]` });
    if (isTable(value)) walk(value, here, entries, positions);
  }
}

/** A value as JSON; what JSON cannot hold as `{"$": kind}`. */
function write(v, position) {
  switch (typeof v) {
    case "bigint":
      if (v < I64_MIN || v > I64_MAX) {
        const [line, column] = position ?? [0, 0];
        const error = new RangeError();
        error.position = { message: `integer ${v} is out of range (TOML integers are 64-bit)`, line, column };
        throw error;
      }
      return String(v);
    case "number":
      return Number.isFinite(v) ? String(v) : '{"$":"not finite"}';
    case "string":
    case "boolean":
      return JSON.stringify(v);
    default:
      if (v instanceof TomlDate) return '{"$":"a datetime"}';
      if (Array.isArray(v)) return `[${v.map((x) => (isTable(x) ? '{"$":"a table"}' : write(x, position))).join(",")}]`;
      return '{"$":"a value"}';
  }
}

/**
 * Where each key's value is (line, column, 1-based, in characters), by the
 * JSON of its full path: a table header's keys at the key, a key/value at the
 * value. smol-toml says where a syntax error is, not where values are, so the
 * lines are scanned for `[header]` and `key = value` outside strings, arrays
 * and inline tables (keys inside those have no position).
 */
function keyPositions(text) {
  const positions = new Map();
  const lines = text.split("\n");
  let table = [];
  let open = null; // the delimiter of a multi-line string that is still open
  let depth = 0; // arrays and inline tables still open
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    let i = 0;
    if (open === null && depth === 0) {
      i = line.search(/\S/);
      if (i < 0 || line[i] === "#") continue;
      if (line[i] === "[") {
        const array = line[i + 1] === "[";
        const start = i + (array ? 2 : 1);
        const keys = dottedKey(line, start);
        if (keys !== null) {
          table = keys.map((k) => k.key);
          keys.forEach((k, j) => positions.set(JSON.stringify(table.slice(0, j + 1)), [n + 1, column(line, k.at)]));
        }
        continue;
      }
      const keys = dottedKey(line, i);
      if (keys === null || line[keys.end] !== "=") continue;
      const path = [...table, ...keys.map((k) => k.key)];
      let v = keys.end + 1;
      while (line[v] === " " || line[v] === "\t") v++;
      positions.set(JSON.stringify(path), [n + 1, column(line, v)]);
      i = v;
    }
    // the rest of the line: strings, brackets and comments
    for (; i < line.length; i++) {
      const c = line[i];
      if (open !== null) {
        if (open === '"""' && c === "\\") i++;
        else if (line.startsWith(open, i)) {
          i += open.length - 1;
          open = null;
        }
        continue;
      }
      if (c === "#") break;
      if (c === '"' || c === "'") {
        const triple = c.repeat(3);
        if (line.startsWith(triple, i)) {
          open = triple;
          i += 2;
          continue;
        }
        for (i++; i < line.length && line[i] !== c; i++) if (c === '"' && line[i] === "\\") i++;
        continue;
      }
      if (c === "[" || c === "{") depth++;
      else if ((c === "]" || c === "}") && depth > 0) depth--;
    }
  }
  return positions;
}

/** The column (1-based, in characters) of UTF-16 index `at` of `line`. */
const column = (line, at) => Array.from(line.slice(0, at)).length + 1;

/**
 * The dotted key at `i` of `line` (bare, "basic" or 'literal' parts, spaces
 * around the dots): its parts with where each starts, and the index after it
 * and the spaces that follow; null where no key is.
 */
function dottedKey(line, i) {
  const keys = [];
  for (;;) {
    while (line[i] === " " || line[i] === "\t") i++;
    const at = i;
    let key;
    if (line[i] === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) if (line[j] === "\\") j++;
      try {
        key = JSON.parse(line.slice(i, j + 1));
      } catch {
        return null;
      }
      i = j + 1;
    } else if (line[i] === "'") {
      const j = line.indexOf("'", i + 1);
      if (j < 0) return null;
      key = line.slice(i + 1, j);
      i = j + 1;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(line.slice(i));
      if (m === null) return null;
      key = m[0];
      i += key.length;
    }
    keys.push({ key, at });
    while (line[i] === " " || line[i] === "\t") i++;
    if (line[i] !== ".") break;
    i++;
  }
  keys.end = i;
  return keys;
}
