// Prints the raw, gzip -9 and brotli sizes of the built package's code, per file
// and in total: what `import … from "chat-compaction"` loads before the first
// call (an entry file, api.js, the wasm-bindgen glue and the .wasm), and
// everything in the package (the TOML reader parseConfig loads, the CLI).
// `--check` fails when either total passes its budget in size-budget.json
// (which also names the goals the budgets ratchet down to).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { brotliCompressSync, gzipSync, constants } from "node:zlib";

const root = new URL("../", import.meta.url);
const dir = new URL("pkg/", root);
const budget = JSON.parse(readFileSync(new URL("size-budget.json", root), "utf8"));
// The largest entry file counts for the runtime that loads it (they are a few lines each).
const ENTRIES = ["browser.js", "node.js", "deno.js", "workerd.js", "node.cjs", "init.js"];
const LOADED = ["api.js", "chat_compaction.js", "chat_compaction_bg.wasm"];

function files(at, prefix = "") {
  return readdirSync(at)
    .sort()
    .flatMap((name) => {
      const path = new URL(name, at);
      if (statSync(path).isDirectory()) return files(new URL(`${name}/`, at), `${prefix}${name}/`);
      return /\.(wasm|js|mjs|cjs)$/.test(name) ? [`${prefix}${name}`] : [];
    });
}

const sizes = new Map();
for (const name of files(dir)) {
  const bytes = readFileSync(new URL(name, dir));
  const gzip = gzipSync(bytes, { level: 9 }).length;
  const brotli = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  sizes.set(name, { raw: bytes.length, gzip, brotli });
}

const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
const row = (name, s) => console.log(`${name.padEnd(30)} ${String(s.raw).padStart(9)} B  ${kb(s.gzip).padStart(9)} gzip  ${kb(s.brotli).padStart(9)} brotli`);
for (const [name, s] of sizes) row(name, s);

const sum = (names) =>
  names.reduce((t, n) => {
    const s = sizes.get(n) ?? { raw: 0, gzip: 0, brotli: 0 };
    return { raw: t.raw + s.raw, gzip: t.gzip + s.gzip, brotli: t.brotli + s.brotli };
  }, { raw: 0, gzip: 0, brotli: 0 });
const entry = ENTRIES.filter((n) => sizes.has(n)).sort((a, b) => sizes.get(b).gzip - sizes.get(a).gzip)[0];
const loaded = sum([entry, ...LOADED]);
const all = sum([...sizes.keys()]);
console.log("");
row("loaded by import (budget)", loaded);
console.log(`${"".padEnd(30)} budget ${kb(budget.loadedByImport)} gzip (goal ${kb(budget.goal.loadedByImport)})`);
row("whole package (budget)", all);
console.log(`${"".padEnd(30)} budget ${kb(budget.wholePackage)} gzip (goal ${kb(budget.goal.wholePackage)})`);

if (process.argv.includes("--check")) {
  const over = [];
  if (loaded.gzip > budget.loadedByImport) over.push(`what import loads is ${kb(loaded.gzip)} gzipped, over its budget of ${kb(budget.loadedByImport)}`);
  if (all.gzip > budget.wholePackage) over.push(`the whole package is ${kb(all.gzip)} gzipped, over its budget of ${kb(budget.wholePackage)}`);
  if (over.length > 0) {
    console.error(`size budget (size-budget.json): ${over.join("; ")}`);
    process.exit(1);
  }
  console.log("size budget: within");
}
