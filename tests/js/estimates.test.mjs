// The package's estimator (the wasm `simd128` scan) against the native one:
// tests/fixtures/estimates/lanes.json holds what the portable Rust build
// estimates for texts that cross the scan's 16- and 64-byte blocks at every
// offset with every class of byte (tests/estimator.rs writes and checks it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { estimateTokens } from "../../pkg/node.js";

const rows = JSON.parse(readFileSync(new URL("../fixtures/estimates/lanes.json", import.meta.url), "utf8"));

test("the wasm estimator counts every lane text as the native build does, under every profile", () => {
  assert.ok(rows.length >= 300);
  const wrong = [];
  for (const row of rows) {
    for (const tokenizer of ["o200k", "cl100k", "claude"]) {
      const got = estimateTokens(row.text, { tokenizer });
      if (got !== row[tokenizer]) wrong.push(`${tokenizer} ${JSON.stringify(row.text.slice(0, 40))}…: ${got}, native ${row[tokenizer]}`);
    }
  }
  assert.deepEqual(wrong, []);
});
