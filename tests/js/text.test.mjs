// JSON text in, JSON text out: compactBody, measureBody and compactJsonString
// read the bytes in wasm (no JSON.parse) and give what the objects path gives,
// with kept messages and every other field as the caller's bytes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compactBody, compactJsonString, compactSync, measure, measureBody, CompactionError } from "../../pkg/node.js";

const sample = JSON.parse(readFileSync(new URL("../../examples/data/tau-bench-airline-3.json", import.meta.url), "utf8"));
const history = Array.isArray(sample) ? sample : sample.messages;
const request = { model: "gpt-4o", temperature: 0.2, messages: history, max_tokens: 512 };
// Each message pretty-printed, odd spacing between: kept ones must come back as they are.
const items = history.map((m) => JSON.stringify(m, null, 2));
const text = `{ "model":"gpt-4o",  "temperature": 0.20,\n "messages" : [ ${items.join(" ,\n ")} ],\n "max_tokens": 512 }`;

test("a request over the threshold is compacted as the objects are, kept messages as their bytes", () => {
  const options = { mode: "recency_preserving", contextWindow: 8000 };
  const objects = compactSync(request, options);
  for (const input of [text, new TextEncoder().encode(text)]) {
    const r = compactBody(input, options);
    assert.equal(r.compacted, true);
    assert.equal(typeof r.body, typeof input === "string" ? "string" : "object");
    const out = typeof r.body === "string" ? r.body : new TextDecoder().decode(r.body);
    assert.deepEqual(JSON.parse(out).messages, objects.messages);
    assert.deepEqual(r.notice, objects.notice);
    assert.equal(r.meter.shouldCompact, true);
    assert.ok(out.startsWith('{ "model":"gpt-4o",  "temperature": 0.20,\n "messages" : [ '), "fields before the messages as they were");
    assert.ok(out.endsWith(' ],\n "max_tokens": 512 }'), "fields after the messages as they were");
    let kept = 0;
    for (const m of objects.messages) {
      const k = history.indexOf(m);
      if (k >= 0) {
        assert.ok(out.includes(items[k]), `message ${k} kept as its bytes`);
        kept++;
      }
    }
    assert.ok(kept > 3, `${kept} kept messages checked`);
  }
});

test("a request under the threshold comes back as the caller's own input, with its meter", () => {
  const bytes = new TextEncoder().encode(text);
  const r = compactBody(bytes, { contextWindow: 200000 });
  assert.equal(r.compacted, false);
  assert.equal(r.body, bytes, "the same object");
  assert.deepEqual(r.meter, measure(request, { contextWindow: 200000 }));
  assert.deepEqual(measureBody(text, { contextWindow: 200000 }), r.meter);
  // force compacts anyway
  assert.equal(compactBody(text, { contextWindow: 200000, force: true, mode: "deterministic" }).compacted, true);
});

test("compactJsonString reads and writes in wasm and answers what compactSync does", () => {
  const options = { mode: "deterministic", contextWindow: 8000 };
  const viaText = JSON.parse(compactJsonString(JSON.stringify(request), options));
  const objects = compactSync(request, options);
  assert.deepEqual(viaText.messages, objects.messages);
  assert.deepEqual(viaText.notice, objects.notice);
  assert.deepEqual(viaText.request, JSON.parse(JSON.stringify(objects.request)));
});

test("bad bytes get INVALID_INPUT naming the byte, and the instance goes on", () => {
  for (const [input, what] of [
    [new Uint8Array([0x7b, 0xff, 0x7d]), /not valid UTF-8 at byte 1 \(line 1, column 2\)/],
    ['{"messages": [{"role": "user"', /ends early.* at byte 29/],
    ["\uFEFF{}", /byte order mark.* at byte 0/],
    ["[" + "[".repeat(200) + "]".repeat(201), /nested deeper than 128 levels at byte 128/],
  ]) {
    assert.throws(() => compactBody(input, { force: true }), (e) => e instanceof CompactionError && e.code === "INVALID_INPUT" && what.test(e.message), String(what));
  }
  assert.throws(() => compactBody(42), (e) => e.code === "INVALID_INPUT" && /a string, a Uint8Array or an ArrayBuffer/.test(e.message));
  assert.equal(compactBody(text, { mode: "recency_preserving", contextWindow: 8000 }).compacted, true, "still works");
});

test("a lone surrogate in the text survives as its escape", () => {
  const withHalf = JSON.stringify({ messages: [...history, { role: "user", content: "half \ud83d emoji" }] });
  const r = compactBody(withHalf, { mode: "recency_preserving", contextWindow: 8000 });
  assert.ok(r.body.includes("half \\ud83d emoji"), "kept as the caller's bytes");
  assert.equal(JSON.parse(r.body).messages.at(-1).content, "half \ud83d emoji");
});

test("compactIfNeeded decides and compacts in one read, as compactSync would", async () => {
  const { compactIfNeeded } = await import("../../pkg/node.js");
  const objects = structuredClone(request);
  const over = compactIfNeeded(objects, { mode: "recency_preserving", contextWindow: 8000 }, "and the next question");
  assert.equal(over.compacted, true);
  assert.equal(over.meter.shouldCompact, true);
  assert.deepEqual(over.meter, measure(objects, { mode: "recency_preserving", contextWindow: 8000 }, "and the next question"));
  const plain = compactSync(objects, { mode: "recency_preserving", contextWindow: 8000 });
  assert.deepEqual(over.result.messages, plain.messages);
  assert.deepEqual(over.result.notice, plain.notice);
  assert.ok(over.result.messages.some((m) => objects.messages.includes(m)), "kept messages are the caller's objects");
  assert.equal(over.result.request.model, "gpt-4o");
  const under = compactIfNeeded(objects, { contextWindow: 200000 });
  assert.equal(under.compacted, false);
  assert.equal(under.result, undefined);
  assert.equal(under.meter.shouldCompact, false);
  assert.throws(() => compactIfNeeded(objects, { mode: "structured" }), (e) => e.code === "SUMMARIZER_REQUIRED");
});
