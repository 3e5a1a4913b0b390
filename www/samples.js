// Synthetic sample conversations for the demo page, made here rather than copied
// from anywhere: one coding-agent session (a bug hunt in a made-up TypeScript
// project) written once as an abstract script, then rendered into every format
// the package reads. A seeded generator makes them the same on every load, so the
// browser tests can count on them.
//
// Runs in the browser and in Node (no imports). `SAMPLES` lists them; each has
// `text()` (what goes into the page's input box) and a suggested context window
// small enough that compaction has something to do.

/** A small seeded PRNG (mulberry32): the same numbers for the same seed. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FILES = [
  "src/billing/dates.ts",
  "src/billing/invoice.ts",
  "src/billing/tax.ts",
  "src/customers/timezone.ts",
  "src/index.ts",
  "test/billing/dates.test.ts",
  "test/billing/invoice.test.ts",
];
const NAMES = ["dueDate", "issueDate", "customerZone", "lineItems", "subtotal", "vatRate", "billingPeriod", "graceDays", "roundCents", "offsetMinutes"];
const TYPES = ["Date", "number", "string", "Invoice", "Customer", "ZoneId", "LineItem[]", "Money"];
const VERBS = ["parse", "format", "compute", "normalize", "resolve", "apply", "validate", "split"];

/** About `lines` lines of made-up TypeScript, numbered like a file viewer prints them. */
function code(rnd, path, lines) {
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const out = [`// ${path}`, `import { ZoneId, toZoned } from "../customers/timezone";`, ""];
  while (out.length < lines) {
    const fn = `${pick(VERBS)}${pick(NAMES).replace(/^./, (c) => c.toUpperCase())}`;
    const arg = pick(NAMES);
    out.push(`export function ${fn}(${arg}: ${pick(TYPES)}, zone: ZoneId): ${pick(TYPES)} {`);
    out.push(`  const ${pick(NAMES)} = toZoned(${arg}, zone);`);
    out.push(`  if (${arg} == null) throw new RangeError("${fn}: ${arg} is missing");`);
    out.push(`  // keeps ${pick(NAMES)} in the customer's zone, not UTC`);
    out.push(`  return ${pick(VERBS)}(${arg}, ${Math.floor(rnd() * 90) + 1});`);
    out.push("}", "");
  }
  return out
    .slice(0, lines)
    .map((l, i) => `${String(i + 1).padStart(4)}  ${l}`)
    .join("\n");
}

/** A test runner's log: passing lines, then the failures (if any). */
function testLog(rnd, failing) {
  const lines = ["> invoice-service@2.3.1 test", "> vitest run", ""];
  const total = 48;
  for (let i = 0; i < 24; i++) {
    const ok = i >= failing;
    lines.push(`${ok ? " ✓" : " ×"} test/billing/${rnd() < 0.5 ? "dates" : "invoice"}.test.ts > ${VERBS[i % VERBS.length]} ${NAMES[i % NAMES.length]} (${Math.floor(rnd() * 40) + 2} ms)`);
  }
  for (let i = 0; i < failing; i++) {
    lines.push("", ` FAIL  test/billing/dates.test.ts > parseDueDate keeps Europe/Berlin`, `AssertionError: expected 2024-03-31T22:00:00.000Z to equal 2024-03-31T23:00:00.000Z`, `  at test/billing/dates.test.ts:${41 + i}:${17 + i}`);
  }
  lines.push("", ` Test Files  ${failing ? 1 : 0} failed | 2 passed (${failing ? 3 : 2})`, `      Tests  ${failing} failed | ${total - failing} passed (${total})`);
  return lines.join("\n");
}

/**
 * The abstract session: `system`, then turns `{role: "user", text}` or
 * `{role: "assistant", thinking?, text?, calls?: [{id, name, args, result, isError?}]}`.
 */
export function session({ seed = 7, rounds = 20 } = {}) {
  const rnd = prng(seed);
  const turns = [
    {
      role: "user",
      text: "Invoice totals are wrong for customers in Europe/Berlin: I think src/billing/dates.ts parses due dates in UTC. Find the bug, fix it and make the tests pass. Please don't change the public API in src/index.ts.",
    },
  ];
  const asks = [
    "Also add a test for the switch to summer time on 2024-03-31.",
    "Keep the rounding in src/billing/tax.ts as it is; finance relies on it.",
    "Could you run the whole suite again before you finish?",
  ];
  let n = 0;
  const id = () => `call_${String(++n).padStart(2, "0")}`;
  for (let r = 0; r < rounds; r++) {
    if (r === rounds - 4) {
      // The person stopped a slow run: this call never got its result (compaction stubs it).
      turns.push({ role: "assistant", text: "Running the full suite with coverage.", calls: [{ id: id(), name: "run_tests", args: { command: "npm test -- --coverage" }, interrupted: true }] });
      turns.push({ role: "user", text: "Stop that, coverage takes ten minutes here. The billing tests are enough." });
    }
    const file = FILES[r % FILES.length];
    const calls = [];
    if (r % 4 === 3) {
      const failing = r < rounds - 2 ? 2 : 0;
      calls.push({ id: id(), name: "run_tests", args: { command: "npm test -- test/billing" }, result: testLog(rnd, failing), isError: failing > 0 });
    } else if (r % 4 === 1) {
      calls.push({ id: id(), name: "grep", args: { pattern: "toZoned\\(", path: "src/" }, result: FILES.slice(0, 5).map((f, i) => `${f}:${12 + i * 7}:  const zoned = toZoned(${NAMES[i]}, zone);`).join("\n") });
      calls.push({ id: id(), name: "read_file", args: { path: file }, result: code(rnd, file, 40 + Math.floor(rnd() * 30)) });
    } else if (r % 4 === 2) {
      calls.push({
        id: id(),
        name: "edit_file",
        args: { path: "src/billing/dates.ts", old: `return new Date(Date.UTC(y, m - 1, d));`, new: `return toZoned(new Date(y, m - 1, d), zone);` },
        result: `Edited src/billing/dates.ts: 1 replacement at line ${30 + r}.`,
      });
    } else {
      calls.push({ id: id(), name: "read_file", args: { path: file }, result: code(rnd, file, 50 + Math.floor(rnd() * 30)) });
    }
    turns.push({
      role: "assistant",
      thinking: `Round ${r + 1}: ${calls.map((c) => c.name).join(" and ")} next, to see how ${file} handles the customer's zone.`,
      text: r % 2 === 0 ? `Looking at ${file} next.` : undefined,
      calls,
    });
    if (r % 5 === 4 && asks.length > 0) {
      turns.push({ role: "assistant", text: `So far: the due date is built with Date.UTC in src/billing/dates.ts, which shifts Berlin invoices by one or two hours around midnight.` });
      turns.push({ role: "user", text: asks.shift() });
    }
  }
  turns.push({ role: "assistant", text: "All 48 tests pass now. The fix: src/billing/dates.ts builds due dates in the customer's zone (toZoned) instead of UTC, and test/billing/dates.test.ts covers the summer-time switch on 2024-03-31. The public API in src/index.ts is unchanged." });
  turns.push({ role: "user", text: "Great, thanks. Next: write the CHANGELOG.md entry for 2.3.2 and tell me what else could break around DST." });
  return {
    system: "You are a careful coding agent working in the repository invoice-service. Use the tools to read, search, edit and test code. Keep changes small and explain what you did.",
    turns,
  };
}

// ---- one renderer per format -------------------------------------------------------

/** The calls of a turn that got their result (an interrupted one did not). */
const answered = (t) => (t.calls ?? []).filter((c) => !c.interrupted);

const T0 = 1767225600000; // 2026-01-01T00:00:00Z, the first created_at of the Moltis sample
const sig = (tag, i) => `${tag}${i}_` + "RXJnZWJuaXMgZWluZXIgc2lnbmllcnRlbiBBbnR3b3J0".repeat(3);

export function toOpenAI(s) {
  const out = [{ role: "system", content: s.system }];
  for (const t of s.turns) {
    if (t.role === "user") out.push({ role: "user", content: t.text });
    else {
      const m = { role: "assistant", content: t.text ?? null };
      if (t.calls?.length) m.tool_calls = t.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }));
      out.push(m);
      for (const c of answered(t)) out.push({ role: "tool", tool_call_id: c.id, content: c.result });
    }
  }
  return out;
}

export function toAnthropic(s) {
  const messages = [];
  let pendingResults = null; // the user message of tool_result blocks after a call turn
  for (const [i, t] of s.turns.entries()) {
    if (t.role === "user") {
      if (pendingResults) {
        pendingResults.content.push({ type: "text", text: t.text });
        pendingResults = null;
      } else messages.push({ role: "user", content: t.text });
      continue;
    }
    if (pendingResults) pendingResults = null;
    const content = [];
    if (t.thinking) content.push({ type: "thinking", thinking: t.thinking, signature: sig("EqQB", i) });
    if (t.text) content.push({ type: "text", text: t.text });
    for (const c of t.calls ?? []) content.push({ type: "tool_use", id: c.id.replace("call_", "toolu_"), name: c.name, input: c.args });
    messages.push({ role: "assistant", content });
    if (answered(t).length) {
      pendingResults = {
        role: "user",
        content: answered(t).map((c) => ({ type: "tool_result", tool_use_id: c.id.replace("call_", "toolu_"), content: c.result, ...(c.isError ? { is_error: true } : {}) })),
      };
      messages.push(pendingResults);
    }
  }
  return { model: "claude-sonnet-4-5", max_tokens: 2048, system: s.system, messages };
}

export function toMoltis(s) {
  const out = [];
  let at = T0;
  const tick = () => (at += 7000);
  out.push({ role: "system", content: s.system, created_at: tick() });
  for (const [i, t] of s.turns.entries()) {
    if (t.role === "user") {
      out.push({ role: "user", content: t.text, created_at: tick() });
      continue;
    }
    const m = { role: "assistant", content: t.text ?? "", created_at: tick() };
    if (t.calls?.length) m.tool_calls = t.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    out.push(m);
    for (const c of answered(t)) {
      out.push({ role: "tool_result", tool_call_id: c.id, tool_name: c.name, success: !c.isError, result: { stdout: c.result, exit_code: c.isError ? 1 : 0 }, created_at: tick() });
    }
    if (i === 6) out.push({ role: "notice", content: "Model switched to a faster one for this session.", created_at: tick() });
  }
  return out;
}

export function toResponses(s) {
  const input = [];
  for (const [i, t] of s.turns.entries()) {
    if (t.role === "user") {
      input.push({ type: "message", role: "user", content: [{ type: "input_text", text: t.text }] });
      continue;
    }
    if (t.thinking) input.push({ type: "reasoning", id: `rs_${i}`, summary: [{ type: "summary_text", text: t.thinking }], encrypted_content: sig("gAAAAB", i) });
    if (t.text) input.push({ type: "message", role: "assistant", id: `msg_${i}`, status: "completed", content: [{ type: "output_text", text: t.text, annotations: [] }] });
    for (const c of t.calls ?? []) input.push({ type: "function_call", id: `fc_${c.id}`, call_id: c.id, name: c.name, arguments: JSON.stringify(c.args), status: "completed" });
    for (const c of answered(t)) input.push({ type: "function_call_output", call_id: c.id, output: c.result });
  }
  return { model: "gpt-5", instructions: s.system, input, store: false };
}

export function toAiSdk(s) {
  const out = [{ role: "system", content: s.system }];
  for (const [i, t] of s.turns.entries()) {
    if (t.role === "user") {
      out.push({ role: "user", content: t.text });
      continue;
    }
    if (!t.calls?.length) {
      out.push({ role: "assistant", content: t.text });
      continue;
    }
    const content = [];
    if (t.thinking) content.push({ type: "reasoning", text: t.thinking, providerOptions: { anthropic: { signature: sig("sig", i) } } });
    if (t.text) content.push({ type: "text", text: t.text });
    for (const c of t.calls) content.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: c.args });
    out.push({ role: "assistant", content });
    if (!answered(t).length) continue;
    out.push({
      role: "tool",
      content: answered(t).map((c) => ({ type: "tool-result", toolCallId: c.id, toolName: c.name, output: c.isError ? { type: "error-text", value: c.result } : { type: "text", value: c.result } })),
    });
  }
  return out;
}

export function toAiSdkUI(s) {
  const out = [{ id: "sys", role: "system", parts: [{ type: "text", text: s.system }] }];
  for (const [i, t] of s.turns.entries()) {
    if (t.role === "user") {
      out.push({ id: `u${i}`, role: "user", parts: [{ type: "text", text: t.text }] });
      continue;
    }
    const parts = [{ type: "step-start" }];
    if (t.thinking) parts.push({ type: "reasoning", text: t.thinking, state: "done" });
    for (const c of t.calls ?? []) {
      parts.push(
        c.interrupted
          ? { type: `tool-${c.name}`, toolCallId: c.id, state: "input-available", input: c.args }
          : c.isError
          ? { type: `tool-${c.name}`, toolCallId: c.id, state: "output-error", input: c.args, errorText: c.result }
          : { type: `tool-${c.name}`, toolCallId: c.id, state: "output-available", input: c.args, output: c.result },
      );
    }
    if (t.text) parts.push({ type: "text", text: t.text, state: "done" });
    out.push({ id: `a${i}`, role: "assistant", parts });
  }
  return out;
}

export function toGemini(s) {
  const contents = [];
  let pending = null; // the user turn of functionResponse parts after a call turn
  for (const [i, t] of s.turns.entries()) {
    if (t.role === "user") {
      if (pending) {
        pending.parts.push({ text: t.text });
        pending = null;
      } else contents.push({ role: "user", parts: [{ text: t.text }] });
      continue;
    }
    pending = null;
    const parts = [];
    if (t.thinking) parts.push({ text: t.thinking, thought: true });
    if (t.text) parts.push({ text: t.text });
    (t.calls ?? []).forEach((c, k) => parts.push({ functionCall: { name: c.name, args: c.args, id: c.id }, ...(k === 0 ? { thoughtSignature: sig("CiQB", i) } : {}) }));
    contents.push({ role: "model", parts });
    if (answered(t).length) {
      pending = { role: "user", parts: answered(t).map((c) => ({ functionResponse: { name: c.name, id: c.id, response: c.isError ? { error: c.result } : { output: c.result } } })) };
      contents.push(pending);
    }
  }
  return { systemInstruction: { parts: [{ text: s.system }] }, contents, generationConfig: { temperature: 0.2 } };
}

const pretty = (v) => JSON.stringify(v, null, 2);
const jsonl = (list) => list.map((m) => JSON.stringify(m)).join("\n") + "\n";

/**
 * What the page sets in its option fields when a sample is picked: a window the
 * sample overflows, and a tail small enough (in messages) but roomy enough (in
 * tokens) that older tool outputs in it are pruned, so each kind of message the
 * library writes shows up.
 */
export const SAMPLE_OPTIONS = { contextWindow: 12000, protectTailMin: 4, tailBudgetRatio: 0.5 };

const sample = (id, label, format, make) => ({ id, label, format, options: SAMPLE_OPTIONS, text: make });

/**
 * The samples the page offers: `{id, label, format, options, text()}`. `format`
 * is what the package should detect.
 */
export const SAMPLES = [
  sample("openai", "Coding agent — OpenAI Chat Completions (JSON)", "openai", () => pretty(toOpenAI(session()))),
  sample("openai-jsonl", "Coding agent — OpenAI, one message a line (JSONL)", "openai", () => jsonl(toOpenAI(session({ seed: 11 })))),
  sample("anthropic", "Coding agent — Anthropic Messages request", "anthropic", () => pretty(toAnthropic(session({ seed: 13 })))),
  sample("moltis", "Coding agent — Moltis session", "moltis", () => pretty(toMoltis(session({ seed: 17 })))),
  sample("openai-responses", "Coding agent — OpenAI Responses request", "openai-responses", () => pretty(toResponses(session({ seed: 19 })))),
  sample("ai-sdk", "Coding agent — Vercel AI SDK ModelMessages", "ai-sdk", () => pretty(toAiSdk(session({ seed: 23 })))),
  sample("ai-sdk-ui", "Coding agent — Vercel AI SDK UIMessages", "ai-sdk-ui", () => pretty(toAiSdkUI(session({ seed: 29 })))),
  sample("gemini", "Coding agent — Google Gemini request", "gemini", () => pretty(toGemini(session({ seed: 31 })))),
  sample("broken", "A broken file (to see an error)", "openai", () => {
    const list = toOpenAI(session({ seed: 5, rounds: 4 }));
    const at = list.findIndex((m) => m.role === "tool");
    delete list[at].tool_call_id; // a tool result that answers nothing
    return pretty(list);
  }),
];
