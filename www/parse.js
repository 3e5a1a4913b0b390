// Reading what a person pasted or dropped: JSON (a message array or a request
// object) or JSON Lines (one message a line). A mistake is reported with its
// line and column and the line itself, never as "position 1234".

/** Line and column (1-based) of character `offset` in `text`. */
export function lineColumn(text, offset) {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/** The character offset a JSON.parse error points at, when the engine says. */
function errorOffset(error, text) {
  const msg = String(error?.message ?? "");
  const pos = /at position (\d+)/.exec(msg);
  if (pos) return Number(pos[1]);
  const lc = /line (\d+) column (\d+)/.exec(msg);
  if (lc) {
    const lines = text.split("\n");
    let offset = 0;
    for (let i = 0; i < Number(lc[1]) - 1 && i < lines.length; i++) offset += lines[i].length + 1;
    return offset + Number(lc[2]) - 1;
  }
  if (/Unexpected end of JSON input|Unterminated/.test(msg)) return text.length;
  return undefined;
}

/** The engine's reason without its own position wording. */
function reasonOf(error) {
  return String(error?.message ?? error)
    .replace(/^JSON\.parse: /, "")
    .replace(/,? ?"[^"]*"\.{3}.*is not valid JSON$/, " is not valid JSON")
    .replace(/ in JSON at position \d+( \(line \d+ column \d+\))?/, "")
    .replace(/ at line \d+ column \d+ of the JSON data$/, "");
}

/** A parse problem: `{message, line, column, excerpt}`; `excerpt` is the line with a caret under the column. */
function problem(text, offset, reason, lineOffset = 0, what = "JSON") {
  if (offset === undefined) return { message: `Not valid ${what}: ${reason}.` };
  const { line, column } = lineColumn(text, offset);
  const source = text.split("\n")[line - 1] ?? "";
  const from = Math.max(0, column - 60);
  const shown = source.slice(from, from + 120);
  const excerpt = `${from > 0 ? "…" : ""}${shown}${from + 120 < source.length ? "…" : ""}\n${" ".repeat(column - 1 - from + (from > 0 ? 1 : 0))}^`;
  const at = line + lineOffset;
  return { message: `Not valid ${what} at line ${at}, column ${column}: ${reason}.`, line: at, column, excerpt };
}

/**
 * Parses a conversation. Returns `{value, kind: "json" | "jsonl", lines?}` or
 * `{error: {message, line?, column?, excerpt?}}`.
 */
export function parseConversation(text) {
  if (typeof text !== "string" || text.trim() === "") return { error: { message: "Paste a conversation, drop a file here, pick one, or choose a sample." } };
  const source = text.replace(/^\uFEFF/, "");
  let first;
  try {
    const value = JSON.parse(source);
    return checkShape(value, "json");
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    first = e;
  }
  // JSON Lines: every non-empty line is one JSON object.
  const lines = source.split("\n");
  const filled = lines.map((l, i) => ({ l, i })).filter(({ l }) => l.trim() !== "");
  if (filled.length >= 2 && filled[0].l.trim().startsWith("{")) {
    const values = [];
    for (const [k, { l, i }] of filled.entries()) {
      try {
        values.push(JSON.parse(l));
      } catch (e) {
        // A first line that is not a whole object: the text is one JSON document with a mistake in it.
        if (k === 0) break;
        return { error: problem(l, errorOffset(e, l), reasonOf(e), i, "JSON Lines") };
      }
    }
    if (values.length === filled.length) {
      const bad = values.findIndex((v) => v === null || typeof v !== "object" || Array.isArray(v));
      if (bad >= 0) return { error: { message: `Line ${filled[bad].i + 1} of the JSON Lines is not a message object.`, line: filled[bad].i + 1 } };
      return { value: values, kind: "jsonl", lines: values.length };
    }
  }
  return { error: problem(source, errorOffset(first, source), reasonOf(first)) };
}

function checkShape(value, kind) {
  if (Array.isArray(value)) return { value, kind };
  if (value !== null && typeof value === "object") {
    if (["messages", "input", "contents"].some((k) => Array.isArray(value[k]))) return { value, kind };
    const keys = Object.keys(value).slice(0, 6).join(", ");
    return { error: { message: `This JSON is an object without a "messages", "input" or "contents" array (its keys: ${keys || "none"}). Give a message array or a request object.` } };
  }
  return { error: { message: `This JSON is ${value === null ? "null" : `a ${typeof value}`}, not a conversation. Give a message array or a request object.` } };
}
