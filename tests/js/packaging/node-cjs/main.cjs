// Node, CommonJS consumer: `require("chat-compaction")` must load the require entry.
const api = require("chat-compaction");
const { compactSync } = require("chat-compaction");

const entry = require.resolve("chat-compaction");
if (!entry.endsWith("/node_modules/chat-compaction/node.cjs")) throw new Error(`resolved ${entry}, expected node.cjs`);
if (typeof compactSync !== "function") throw new Error("destructured require() lacks compactSync");
const sample = require("./sample.json");

import("./checks.mjs")
  .then(({ runChecks }) => runChecks(api, sample))
  .then((summary) => console.log(`PACKAGING-OK ${JSON.stringify({ entry: entry.split("/").pop(), ...summary })}`))
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
