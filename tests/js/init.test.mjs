// `chat-compaction/init` (pkg/init.js): the API before and after `initializeSync`.
// Run in its own process by node --test, so the module starts uninitialized.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compactSync, compact, measure, parseConfig, validate, initializeSync, CompactionError } from "../../pkg/init.js";

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
