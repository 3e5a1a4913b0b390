// The built package (pkg/) in Node 20, loaded as an ES module.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { compact, compactSync, estimateTokens, parseConfig, shouldCompact, CompactionError } from "../../pkg/node.js";
import { checkRules } from "./rules.mjs";

const corpus = new URL("../../../shared/corpus/", import.meta.url);
const sample = JSON.parse(readFileSync(new URL("../../examples/data/tau-bench-airline-3.json", import.meta.url), "utf8"));

test("compacts corpus sessions in every format with both offline modes", { skip: !existsSync(corpus) && !process.env.REQUIRE_CORPUS && "../shared/corpus is not there" }, () => {
  for (const id of ["8c0be6e5", "5558c6aa", "c1f62324"]) {
    for (const format of ["anthropic", "openai", "moltis"]) {
      const input = JSON.parse(readFileSync(new URL(`swecontext-${id}.${format}.json`, corpus), "utf8"));
      const before = structuredClone(input);
      const messages = Array.isArray(input) ? input : input.messages;
      for (const mode of ["deterministic", "recency_preserving"]) {
        const r = compactSync(input, { mode, contextWindow: 16000 });
        assert.deepEqual(input, before, "input unchanged");
        checkRules(format, r.messages);
        assert.ok(r.notice.tokensAfter < r.notice.tokensBefore, `${id}.${format} ${mode} smaller`);
        assert.equal(r.notice.mode, mode);
        assert.equal(r.notice.messagesBefore, messages.length);
        assert.equal(r.notice.messagesAfter, r.messages.length);
        if (mode === "recency_preserving") {
          // Anthropic merges the marker into a user message before it (alternation
          // "merge", its default): that head message keeps its blocks, the marker follows them.
          for (let i = 0; i < 3; i++) {
            if (format !== "anthropic" || isDeepStrictEqual(r.messages[i], messages[i])) {
              assert.deepEqual(r.messages[i], messages[i], `head verbatim: messages[${i}]`);
              continue;
            }
            const blocks = typeof messages[i].content === "string" ? [{ type: "text", text: messages[i].content }] : messages[i].content;
            assert.equal(r.messages[i].role, "user", `only a user message takes the marker in: messages[${i}]`);
            assert.deepEqual(r.messages[i].content.slice(0, blocks.length), blocks, `head blocks verbatim: messages[${i}]`);
            assert.match(r.messages[i].content.at(-1).text, /^\[Conversation Compacted\]/, `the marker merged into messages[${i}]`);
          }
          assert.deepEqual(r.messages.at(-1), messages.at(-1), "newest message verbatim");
          assert.ok(r.messages.some((m) => JSON.stringify(m.content).includes("[Conversation Compacted]")));
        } else {
          assert.equal(r.messages.length, 1);
          assert.match(r.messages[0].content, /^\[Conversation Summary\]\n\n/);
        }
        assert.equal(JSON.stringify(compactSync(input, { mode, contextWindow: 16000 })), JSON.stringify(r), "deterministic output");
      }
    }
  }
});

test("the notice text and result shape follow SPEC §7", async () => {
  const r = await compact(sample, { mode: "recency_preserving", contextWindow: 8000, showSettingsHint: false });
  assert.equal(r.notice.text, "🧹 Conversation compacted\nMode: Recency preserving\nNo LLM tokens used (recency preserving strategy)");
  assert.equal(r.notice.settingsHint, undefined);
  assert.deepEqual(r.warnings, []);
  assert.equal(r.request, undefined);
  checkRules("openai", r.messages);
  assert.deepEqual(r.messages[0], sample[0], "system prompt kept");
});

test("a request object comes back with only its messages replaced", () => {
  const request = { model: "claude-sonnet-4-5", max_tokens: 1024, system: "Be brief.", messages: [
    { role: "user", content: "first question about src/app.ts" },
    { role: "assistant", content: "first answer" },
    { role: "user", content: "second question" },
  ], tools: [{ name: "x", input_schema: { type: "object" } }] };
  const r = compactSync(request, { format: "anthropic" });
  assert.deepEqual(Object.keys(r.request), Object.keys(request));
  assert.equal(r.request.system, "Be brief.");
  assert.deepEqual(r.request.tools, request.tools);
  assert.equal(r.request.messages, r.messages);
  assert.equal(request.messages.length, 3, "input untouched");
});

test("errors are Error objects with a stable code, and the instance keeps working", () => {
  for (let i = 0; i < 1000; i++) {
    assert.throws(() => compactSync([{ role: "user", content: 42 }]), (e) => {
      assert.ok(e instanceof Error && e instanceof CompactionError);
      assert.equal(e.code, "INVALID_INPUT");
      assert.match(e.message, /messages\[0\]\.content/);
      return true;
    });
  }
  assert.throws(() => compactSync(sample, { mode: "nope" }), { code: "INVALID_CONFIG" });
  assert.throws(() => compactSync([]), { code: "EMPTY_HISTORY" });
  assert.throws(() => compactSync(sample, { mode: "structured" }), { code: "SUMMARIZER_REQUIRED" });
  assert.throws(() => compactSync(sample, { protectHead: -1 }), { code: "INVALID_CONFIG" });
  assert.throws(() => compactSync(sample, { contextWindow: NaN }), (e) => e.code === "INVALID_CONFIG" && /contextWindow/.test(e.message));
  assert.throws(() => compactSync(sample, { contextWindow: 10n }), { code: "INVALID_CONFIG" });
  assert.throws(() => compactSync({ messages: [{ role: "user", content: "a" }, { role: "user", content: "x", n: 1n }] }), (e) => e.code === "INVALID_INPUT" && e.message.startsWith("messages[1]: a BigInt"));
  const cyclic = [{ role: "user", content: "x" }];
  cyclic[0].self = cyclic;
  assert.throws(() => compactSync(cyclic), (e) => e.code === "INVALID_INPUT" && /nested deeper/.test(e.message));
  // toJSON is called once per value, never on its own answer (as JSON.stringify does):
  // an object answering itself reads as its other properties, here none ({}).
  const endless = { toJSON: () => endless };
  assert.equal(JSON.stringify({ content: endless }), '{"content":{}}');
  assert.throws(() => compactSync([{ role: "user", content: endless }]), (e) => e.code === "INVALID_INPUT" && /messages\[0\]\.content: expected a string or an array of content parts, got an object/.test(e.message));
  const dated = compactSync([{ role: "user", content: "when?", at: new Date(0) }, { role: "assistant", content: "then" }]);
  assert.equal(dated.messages.length, 1, "toJSON values (a Date) are read like JSON.stringify reads them");
  assert.equal(compactSync(sample).messages.length, 3, "still works after 1,000 errors");
});

test("estimateTokens, shouldCompact and parseConfig", async () => {
  assert.equal(estimateTokens(""), 0);
  const t = estimateTokens(sample);
  assert.ok(t > 5000 && t < 12000, `sample estimate ${t}`);
  assert.ok(estimateTokens("这是一个关于上下文窗口压缩的测试句子") > estimateTokens("context window compaction test"));
  assert.equal(shouldCompact(sample, { contextWindow: 200000 }), false);
  assert.equal(shouldCompact(sample, { contextWindow: 8000 }), true);
  const moltis = [{ role: "user", content: "hi" }, { role: "assistant", content: "final reply", requestInputTokens: 94, created_at: 1 }];
  assert.equal(shouldCompact(moltis, { contextWindow: 100 }, "ping"), true);
  const c = await parseConfig('[chat.compaction]\nmode = "llm-replace"\ntail_budget_ratio = 0.9\n');
  assert.equal(c.options.mode, "llm_replace");
  assert.equal(c.options.tailBudgetRatio, 0.8);
  assert.match(c.warnings[0].message, /using 0\.8 \(line 3, column 21\)/);
  await assert.rejects(parseConfig("[chat.compaction]\nprotect_head = \"three\"\n"), (e) => e.code === "INVALID_CONFIG" && /line 2, column 16/.test(e.message));
});

test("synthesized ids: derived by default, random with randomIds", () => {
  const h = [{ role: "user", content: "question", id: "m1" }, { role: "assistant", content: "answer", id: "m2" }];
  const id = (o) => compactSync(h, o).messages[0].id;
  assert.match(id(), /^cc_[0-9a-f]{16}$/);
  assert.equal(id(), id(), "content-derived ids repeat");
  assert.notEqual(id({ randomIds: true }), id({ randomIds: true }), "random ids differ");
});

test("kept messages are the caller's own objects, and the JSON-string path agrees", async () => {
  const { compactJsonString } = await import("../../pkg/node.js");
  const r = compactSync(sample, { mode: "recency_preserving", contextWindow: 8000 });
  const kept = r.messages.filter((m) => sample.includes(m));
  assert.ok(kept.length >= r.messages.length - 2, "all but the marker (and stubs) are identical objects");
  const viaString = JSON.parse(compactJsonString(JSON.stringify(sample), { mode: "recency_preserving", contextWindow: 8000 }));
  assert.deepEqual(viaString.messages, JSON.parse(JSON.stringify(r.messages)));
  assert.deepEqual(viaString.notice, r.notice);
});

test("countTokens replaces the estimator everywhere; its failures surface with cause", () => {
  const chars = (t) => t.length;
  const text = "hello world";
  assert.equal(estimateTokens(text, { countTokens: chars }), 11);
  const before = estimateTokens(sample, { countTokens: chars });
  assert.notEqual(before, estimateTokens(sample));
  const r = compactSync(sample, { mode: "recency_preserving", contextWindow: 8000, countTokens: chars });
  assert.equal(r.notice.tokensBefore, before);
  assert.equal(shouldCompact(sample, { contextWindow: 8000, countTokens: () => 0 }), false, "a counter of zeros never fires");
  const boom = new Error("tokenizer not loaded");
  assert.throws(() => compactSync(sample, { countTokens: () => { throw boom; } }), (e) => e.code === "INVALID_CONFIG" && e.cause === boom);
  assert.throws(() => estimateTokens(text, { countTokens: () => NaN }), { code: "INVALID_CONFIG" });
  assert.throws(() => estimateTokens(text, { countTokens: 3 }), { code: "INVALID_CONFIG" });
  assert.equal(compactSync(sample).messages.length, 3, "still works afterwards");
});

test("docs/llm-modes.md shows examples/summarizers.mjs as it is", () => {
  const readme = readFileSync(new URL("../../docs/llm-modes.md", import.meta.url), "utf8");
  const file = readFileSync(new URL("../../examples/summarizers.mjs", import.meta.url), "utf8");
  assert.ok(readme.includes("```js\n" + file.trimEnd() + "\n```"), "docs/llm-modes.md's summarizers block differs from examples/summarizers.mjs");
});

test("the JS rule checker judges the shared cases like the Rust one", () => {
  const { cases } = JSON.parse(readFileSync(new URL("../fixtures/rules/checker.json", import.meta.url), "utf8"));
  assert.ok(cases.length >= 10);
  for (const c of cases) {
    let error;
    try {
      checkRules(c.format, c.messages);
    } catch (e) {
      error = e;
    }
    assert.equal(error === undefined, c.valid, `${c.name}: ${error?.message}`);
  }
});

test("an error names the options left aside as unknown (a misspelt option shows where the call fails)", () => {
  const h = [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }];
  assert.throws(
    () => compactSync(h, { mode: "recency_preserving", contextWindows: 8000 }),
    (e) => e.code === "TOO_SMALL_TO_COMPACT" && /\(note: unknown option "contextWindows" ignored\)$/.test(e.message),
  );
  assert.throws(() => compactSync(h, { mode: "recency_preserving" }), (e) => e.code === "TOO_SMALL_TO_COMPACT" && !/note:/.test(e.message));
});

test("error wordings name what came: a text for estimateTokens, the string a counter returned, a negative pin, undefined", async () => {
  for (const v of [42, undefined, null]) {
    assert.throws(() => estimateTokens(v), (e) => e.code === "INVALID_INPUT" && /^input: expected a text, an array of messages/.test(e.message) && e.message.endsWith(`got ${v === 42 ? "a number" : String(v)}`));
  }
  const h = [{ role: "user", content: "hello there" }];
  assert.throws(() => estimateTokens(h, { countTokens: () => "608" }), (e) => e.code === "INVALID_CONFIG" && /returned the string "608"/.test(e.message));
  assert.throws(() => compactSync(h, { pin: [-1] }), (e) => e.code === "INVALID_CONFIG" && /found a negative or fractional number/.test(e.message));
  const r = await compact(sample, { mode: "structured", contextWindow: 8000, summarize: () => undefined });
  assert.match(r.notice.fallback.reason, /returned undefined;/);
});

test("a pin getter that throws is INVALID_CONFIG, the history untouched and the instance working", () => {
  const h = [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }];
  const before = JSON.stringify(h);
  const options = { mode: "deterministic", get pin() { throw new Error("no pins today"); } };
  assert.throws(() => compactSync(h, options), (e) => e.code === "INVALID_CONFIG" && /no pins today/.test(e.message));
  assert.equal(JSON.stringify(h), before);
  assert.ok(estimateTokens(h) > 0 && compactSync(h, { mode: "deterministic" }).messages.length > 0);
});
