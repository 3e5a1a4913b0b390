// `chat-compaction/init` (pkg/init.js): the API before and after `initializeSync`.
// Run in its own process by node --test, so the module starts uninitialized.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compactSync, compact, measure, parseConfig, validate, initialize, initializeSync, CompactionError } from "../../pkg/init.js";

test("a source the module cannot come from is NOT_INITIALIZED with the runtime's error as cause; a good one works after", async () => {
  const junk = new TextEncoder().encode("<!doctype html><title>Not Found</title>");
  const wasmLike = { headers: { "content-type": "application/wasm" } };
  for (const [name, source] of [["bad bytes", junk], ["empty bytes", new Uint8Array(0)], ["null", null]]) {
    assert.throws(() => initializeSync(source), (e) => e instanceof CompactionError && e.code === "NOT_INITIALIZED" && e.cause instanceof Error, `initializeSync: ${name}`);
  }
  for (const [name, source] of [
    ["bad bytes", junk],
    ["empty bytes", new ArrayBuffer(0)],
    ["null", null],
    ["a bad URL", "not a url"],
    ["a Response that is not wasm", new Response(junk, wasmLike)],
    ["a 404 Response", new Response("Not Found", { status: 404 })],
    ["a Response promise that rejects with a null-prototype object", "rejects"],
  ]) {
    // (the rejected promise is made when it is passed: one left waiting is an unhandled rejection)
    await assert.rejects(initialize(source === "rejects" ? Promise.reject(Object.create(null)) : source), (e) => e instanceof CompactionError && e.code === "NOT_INITIALIZED" && /cannot instantiate/.test(e.message) && e.cause !== undefined, `initialize: ${name}`);
  }
  assert.throws(() => measure([{ role: "user", content: "hello" }]), { code: "NOT_INITIALIZED" }, "still uninitialized");
});

test("a call before initialize is NOT_INITIALIZED, saying what to do; after it the API works", async () => {
  const history = [{ role: "user", content: "hello" }];
  for (const [name, call] of [
    ["compactSync", () => compactSync(history)],
    ["measure", () => measure(history)],
    ["validate", () => validate(history)],
  ]) {
    assert.throws(call, (e) => e instanceof CompactionError && e.code === "NOT_INITIALIZED" && /initialize\(/.test(e.message), name);
  }
  await assert.rejects(parseConfig(""), (e) => e instanceof CompactionError && e.code === "NOT_INITIALIZED", "parseConfig");
  await assert.rejects(compact(history, { mode: "structured", summarize: () => "x" }), { code: "NOT_INITIALIZED" });
  initializeSync(readFileSync(new URL("../../pkg/chat_compaction_bg.wasm", import.meta.url)));
  assert.equal(measure(history).perMessage.length, 1);
});
