// Reading messages of every format the package handles into one simple shape the
// page can draw: `{role, parts}`, where a part is text, reasoning, a tool call, a
// tool result, an attachment or something opaque. Also tells what compaction made
// of a message (kept, pruned placeholder, stub, marker, summary, edited), and
// turns a summarizer request of any format into OpenAI Chat messages.
//
// Every function here takes whatever it is given: a malformed message gives a
// part that says so, never an exception (the page draws the input before the
// library has judged it).

/** Texts the library writes (src/text.rs, src/plan/mod.rs). */
export const SUMMARY_PREFIX = "[Conversation Summary]";
export const MARKER_PREFIX = "[Conversation Compacted]";
export const PLACEHOLDER = "[Old tool output cleared to save context space]";
/** Opens a stub result (what follows says whether a summary or a marker stands for it). */
export const STUB_PREFIX = "[Result from earlier conversation — ";
const CUT = /\[… \d+ bytes cut …\]/;

export const FORMAT_NAMES = {
  openai: "OpenAI Chat Completions",
  anthropic: "Anthropic Messages",
  moltis: "Moltis session",
  "openai-responses": "OpenAI Responses",
  "ai-sdk": "Vercel AI SDK ModelMessages",
  "ai-sdk-ui": "Vercel AI SDK UIMessages",
  gemini: "Google Gemini",
};

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v) => (typeof v === "string" ? v : "");

/** Text of any value: strings as they are, the rest as indented JSON. */
export function show(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Pretty-printed call arguments: JSON text is re-indented, anything else shown as is. */
function args(value) {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return show(value);
}

/** The messages of a history (array, or the array inside a request object) and the request's key. */
export function messagesOf(history) {
  if (Array.isArray(history)) return { messages: history, key: undefined };
  if (isObject(history)) {
    for (const key of ["messages", "input", "contents"]) if (Array.isArray(history[key])) return { messages: history[key], key };
  }
  return { messages: [], key: undefined };
}

/** The system prompt a request holds apart from its messages (Anthropic, AI SDK, Responses, Gemini), as text. */
export function heldApartSystem(history) {
  if (!isObject(history)) return undefined;
  const textOf = (v) => {
    if (typeof v === "string") return v;
    if (Array.isArray(v)) return v.map((b) => (typeof b === "string" ? b : str(b?.text))).join("\n");
    if (isObject(v) && Array.isArray(v.parts)) return textOf(v.parts);
    return undefined;
  };
  if (Array.isArray(history.input)) return textOf(history.instructions);
  if (Array.isArray(history.contents)) return textOf(history.systemInstruction ?? history.system_instruction);
  if (Array.isArray(history.messages)) return textOf(history.system);
  return undefined;
}

// ---- parts ------------------------------------------------------------------------

const text = (t) => ({ type: "text", text: str(t) });
const reasoning = (t, signed) => ({ type: "reasoning", text: str(t), signed: Boolean(signed) });
const call = (id, name, input) => ({ type: "call", id: str(id), name: str(name) || "(unnamed tool)", args: args(input) });
const result = (id, name, content, isError) => ({ type: "result", id: str(id), name: str(name), text: show(content), isError: Boolean(isError) });
const media = (label) => ({ type: "media", label });
const opaque = (label, value) => ({ type: "opaque", label, text: show(value) });

/** Text of OpenAI-like content: a string or an array of parts. */
function openAIContent(content) {
  if (typeof content === "string") return content ? [text(content)] : [];
  if (!Array.isArray(content)) return content == null ? [] : [opaque("content", content)];
  return content.map((p) => {
    if (typeof p === "string") return text(p);
    switch (p?.type) {
      case "text":
      case "input_text":
      case "output_text":
        return text(p.text);
      case "refusal":
        return text(`(refused) ${str(p.refusal)}`);
      case "image_url":
      case "input_image":
      case "image":
        return media("image");
      case "input_audio":
        return media("audio");
      case "input_file":
      case "file":
        return media(`file ${str(p.filename)}`.trim());
      default:
        return opaque(str(p?.type) || "part", p);
    }
  });
}

/** Text of a tool result's content in any shape (string, blocks, AI SDK output). */
function resultContent(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((b) => (typeof b === "string" ? b : b?.type === "text" || b?.type === "input_text" || b?.type === "output_text" ? str(b.text) : `[${str(b?.type) || "part"}]`)).join("\n");
  return show(content);
}

function openAI(m) {
  if (m.role === "tool") return { role: "tool", parts: [result(m.tool_call_id, m.name, resultContent(m.content))] };
  if (m.role === "tool_result") {
    const content = m.result !== undefined ? m.result : m.content;
    const value = isObject(content) && typeof content.stdout === "string" && Object.keys(content).every((k) => k === "stdout" || k === "exit_code") ? content.stdout : content;
    const parts = [result(m.tool_call_id, m.tool_name, typeof value === "string" ? value : show(value), m.success === false || m.error !== undefined)];
    if (m.error !== undefined) parts[0].text += `${parts[0].text ? "\n" : ""}error: ${show(m.error)}`;
    return { role: "tool", parts };
  }
  if (m.role === "notice") return { role: "notice", parts: openAIContent(m.content) };
  const role = m.role === "developer" ? "system" : ["system", "user", "assistant"].includes(m.role) ? m.role : "other";
  const parts = openAIContent(m.content);
  if (m.reasoning_content) parts.unshift(reasoning(m.reasoning_content));
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) parts.push(call(c?.id, c?.function?.name, c?.function?.arguments));
  if (m.function_call) parts.push(call("", m.function_call.name, m.function_call.arguments));
  return { role, parts, label: m.role === "developer" ? "developer" : undefined };
}

function anthropic(m) {
  const role = m.role === "user" || m.role === "assistant" ? m.role : m.role === "system" ? "system" : "other";
  if (typeof m.content === "string") return { role, parts: m.content ? [text(m.content)] : [] };
  if (!Array.isArray(m.content)) return { role, parts: [opaque("content", m.content)] };
  const parts = m.content.map((b) => {
    switch (b?.type) {
      case "text":
        return text(b.text);
      case "thinking":
        return reasoning(b.thinking, b.signature);
      case "redacted_thinking":
        return reasoning("(redacted thinking)", true);
      case "tool_use":
      case "server_tool_use":
        return call(b.id, b.name, b.input);
      case "tool_result":
        return result(b.tool_use_id, "", resultContent(b.content), b.is_error);
      case "image":
        return media("image");
      case "document":
        return media("document");
      case "compaction":
        return opaque("provider compaction", b);
      default:
        return opaque(str(b?.type) || "block", b);
    }
  });
  return { role, parts };
}

function responses(m) {
  const type = m.type ?? (m.role ? "message" : undefined);
  switch (type) {
    case "message":
      return { role: m.role === "developer" ? "system" : ["system", "user", "assistant"].includes(m.role) ? m.role : "other", parts: openAIContent(m.content), label: m.role === "developer" ? "developer" : undefined };
    case "function_call":
      return { role: "assistant", parts: [call(m.call_id, m.name, m.arguments)] };
    case "custom_tool_call":
      return { role: "assistant", parts: [call(m.call_id, m.name, m.input)] };
    case "function_call_output":
    case "custom_tool_call_output":
      return { role: "tool", parts: [result(m.call_id, "", resultContent(m.output))] };
    case "reasoning":
      return { role: "assistant", parts: [reasoning((Array.isArray(m.summary) ? m.summary : []).map((s) => str(s?.text)).join("\n") || "(reasoning)", m.encrypted_content)] };
    default:
      return { role: "other", parts: [opaque(str(type) || "item", m)] };
  }
}

/** An AI SDK tool-result `output` as text, and whether it is an error. */
function aiOutput(output) {
  if (isObject(output) && typeof output.type === "string" && "value" in output) {
    return { text: output.type === "text" || output.type === "error-text" ? str(output.value) : show(output.value), isError: output.type.startsWith("error") };
  }
  return { text: show(output), isError: false };
}

function aiSdk(m) {
  const role = ["system", "user", "assistant", "tool"].includes(m.role) ? m.role : "other";
  if (typeof m.content === "string") return { role, parts: m.content ? [text(m.content)] : [] };
  if (!Array.isArray(m.content)) return { role, parts: [opaque("content", m.content)] };
  const parts = m.content.map((p) => {
    switch (p?.type) {
      case "text":
        return text(p.text);
      case "reasoning":
        return reasoning(p.text, p.providerOptions);
      case "tool-call":
        return call(p.toolCallId, p.toolName, p.input);
      case "tool-result": {
        const o = aiOutput(p.output);
        return result(p.toolCallId, p.toolName, o.text, o.isError);
      }
      case "image":
        return media("image");
      case "file":
        return media(`file ${str(p.filename)}`.trim());
      default:
        return opaque(str(p?.type) || "part", p);
    }
  });
  return { role, parts };
}

function aiSdkUI(m) {
  const role = ["system", "user", "assistant"].includes(m.role) ? m.role : "other";
  if (!Array.isArray(m.parts)) return { role, parts: [opaque("parts", m.parts)] };
  const parts = [];
  for (const p of m.parts) {
    const type = str(p?.type);
    if (type === "text") parts.push(text(p.text));
    else if (type === "reasoning") parts.push(reasoning(p.text, p.providerMetadata));
    else if (type === "step-start") continue;
    else if (type === "file") parts.push(media(`file ${str(p.filename)}`.trim()));
    else if (type === "dynamic-tool" || type.startsWith("tool-")) {
      const name = type === "dynamic-tool" ? p.toolName : type.slice(5);
      const c = call(p.toolCallId, name, p.input);
      parts.push(c);
      if (p.state === "output-available") parts.push(result(p.toolCallId, name, show(p.output)));
      else if (p.state === "output-error") parts.push(result(p.toolCallId, name, str(p.errorText), true));
      else if (p.state === "output-denied") parts.push(result(p.toolCallId, name, "(the person denied this call)", true));
      else c.running = true;
    } else parts.push(opaque(type || "part", p));
  }
  return { role, parts };
}

/** Gemini: calls without an id are matched by name and order within the turn (`name#k`). */
function gemini(m) {
  const role = m.role === "model" ? "assistant" : m.role === "user" || m.role === undefined ? "user" : m.role === "system" ? "system" : "other";
  if (!Array.isArray(m.parts)) return { role, parts: [opaque("parts", m.parts)] };
  const seen = new Map();
  const idFor = (name, id) => {
    if (typeof id === "string" && id) return id;
    const k = seen.get(name) ?? 0;
    seen.set(name, k + 1);
    return `${name}#${k}`;
  };
  const parts = m.parts.map((p) => {
    if (!isObject(p)) return opaque("part", p);
    if (typeof p.text === "string") return p.thought ? reasoning(p.text, p.thoughtSignature) : text(p.text);
    if (isObject(p.functionCall)) return call(idFor(p.functionCall.name, p.functionCall.id), p.functionCall.name, p.functionCall.args ?? {});
    if (isObject(p.functionResponse)) {
      const r = p.functionResponse.response;
      const only = isObject(r) && Object.keys(r).length === 1 ? Object.values(r)[0] : undefined;
      const content = typeof only === "string" ? only : show(r);
      return result(idFor(p.functionResponse.name, p.functionResponse.id), p.functionResponse.name, content, isObject(r) && "error" in r);
    }
    if (p.inlineData || p.fileData) return media(str((p.inlineData ?? p.fileData).mimeType) || "file");
    return opaque(Object.keys(p)[0] ?? "part", p);
  });
  return { role, parts };
}

const READERS = { openai: openAI, moltis: openAI, anthropic, "openai-responses": responses, "ai-sdk": aiSdk, "ai-sdk-ui": aiSdkUI, gemini };

/** One message in any format as `{role, parts, label?}`; never throws. */
export function normalize(message, format) {
  if (!isObject(message)) return { role: "other", parts: [opaque("not an object", message)] };
  try {
    return (READERS[format] ?? openAI)(message);
  } catch (e) {
    return { role: "other", parts: [opaque(`unreadable (${e?.message ?? e})`, message)] };
  }
}

// ---- what compaction made of a message ------------------------------------------------

/** The kind of a piece of text the library may have written. */
export function textKind(t) {
  if (typeof t !== "string") return undefined;
  if (t.startsWith(SUMMARY_PREFIX)) return "summary";
  if (t.startsWith(MARKER_PREFIX)) return "marker";
  if (t.startsWith(STUB_PREFIX)) return "stub";
  if (t.startsWith(PLACEHOLDER)) return "pruned";
  if (CUT.test(t)) return "shortened";
  return undefined;
}

/** Adds `kind` to each part (summary, marker, stub, pruned, shortened), in place; returns the message. */
export function markParts(view) {
  for (const p of view.parts) {
    const k = p.type === "text" || p.type === "result" ? textKind(p.text) : p.type === "call" && CUT.test(p.args) ? "shortened" : undefined;
    if (k) p.kind = k;
  }
  return view;
}

/**
 * What a message of a result is: `kept` (the caller's own object, copied
 * verbatim), `summary`, `marker`, `stub`, `pruned` (a tool output replaced by the
 * placeholder), or `edited` (a new object: shortened or merged). A kept message
 * that holds an earlier summary or marker is still `kept`.
 */
export function messageKind(view, kept) {
  if (kept) return "kept";
  const kinds = new Set(view.parts.map((p) => p.kind));
  for (const k of ["summary", "marker", "stub", "pruned"]) if (kinds.has(k)) return k;
  return "edited";
}

// ---- a summarizer request as OpenAI Chat messages ------------------------------------

/**
 * `request.messages` of a summarizer request are in the history's own format
 * (OpenAI Chat for OpenAI and Moltis histories). An OpenAI-compatible endpoint
 * wants OpenAI Chat messages: this keeps the roles apart (never one inlined
 * blob), turns calls into `tool_calls` and results into `tool` messages right
 * after them, and leaves reasoning out.
 */
export function toOpenAIChat(request, format) {
  const list = Array.isArray(request?.messages) ? request.messages : [];
  if (format === "openai" || format === "moltis") return list;
  const out = [];
  let open = null; // the last assistant message with tool_calls, while its results may follow
  const answered = new Set();
  const closeOpen = () => {
    if (!open) return;
    for (const c of open.tool_calls) if (!answered.has(c.id)) out.push({ role: "tool", tool_call_id: c.id, content: "(no result)" });
    open = null;
    answered.clear();
  };
  const pushText = (role, texts) => {
    const content = texts.join("\n\n");
    if (!content) return;
    closeOpen();
    const last = out[out.length - 1];
    if (role === "assistant" && last?.role === "assistant" && !last.tool_calls) last.content = `${last.content ?? ""}\n\n${content}`.trim();
    else out.push({ role, content });
  };
  for (const m of list) {
    const v = normalize(m, format);
    const role = v.role === "assistant" ? "assistant" : v.role === "system" ? "system" : "user";
    const texts = [];
    const calls = [];
    const results = [];
    for (const p of v.parts) {
      if (p.type === "text") texts.push(p.text);
      else if (p.type === "media") texts.push(`[${p.label}]`);
      else if (p.type === "call") calls.push(p);
      else if (p.type === "result") results.push(p);
      else if (p.type === "opaque") texts.push(`[${p.label}]`);
    }
    // Results first (Anthropic and Gemini put them in the user turn before any text).
    if (v.role !== "assistant" || calls.length === 0) {
      for (const r of results) {
        if (open && open.tool_calls.some((c) => c.id === r.id) && !answered.has(r.id)) {
          out.push({ role: "tool", tool_call_id: r.id, content: r.text || "(empty)" });
          answered.add(r.id);
        } else {
          closeOpen();
          out.push({ role: "user", content: `Tool result${r.name ? ` of ${r.name}` : ""}:\n${r.text}` });
        }
      }
    }
    if (v.role === "tool") continue;
    if (role === "assistant" && calls.length > 0) {
      const content = texts.join("\n\n") || null;
      const last = out[out.length - 1];
      if (open && last === open && answered.size === 0) {
        // Responses items: one turn's calls come as separate items.
        if (content) open.content = `${open.content ?? ""}\n\n${content}`.trim();
      } else {
        closeOpen();
        const prev = out[out.length - 1];
        if (prev?.role === "assistant" && !prev.tool_calls) {
          open = prev;
          if (content) prev.content = `${prev.content ?? ""}\n\n${content}`.trim();
          prev.tool_calls = [];
        } else {
          open = { role: "assistant", content, tool_calls: [] };
          out.push(open);
        }
      }
      const used = new Set(open.tool_calls.map((c) => c.id));
      for (const c of calls) {
        let id = c.id || `call_${out.length}_${open.tool_calls.length}`;
        while (used.has(id)) id += "_";
        used.add(id);
        open.tool_calls.push({ id, type: "function", function: { name: c.name, arguments: jsonText(c.args) } });
      }
      // UIMessages (and provider-run tools) carry the results in the same message.
      for (const r of results) {
        if (open.tool_calls.some((c) => c.id === r.id) && !answered.has(r.id)) {
          out.push({ role: "tool", tool_call_id: r.id, content: r.text || "(empty)" });
          answered.add(r.id);
        }
      }
      if (results.length > 0) closeOpen();
      continue;
    }
    pushText(role, texts);
  }
  closeOpen();
  const system = typeof request?.system === "string" ? request.system : "";
  if (system && out[0]?.role !== "system") out.unshift({ role: "system", content: system });
  return out;
}

/** Call arguments as the JSON text OpenAI expects. */
function jsonText(pretty) {
  try {
    return JSON.stringify(JSON.parse(pretty));
  } catch {
    return JSON.stringify({ input: pretty });
  }
}
