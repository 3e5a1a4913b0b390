// Prints the raw and gzipped sizes of the built package's wasm and JS files.
import { readFileSync, readdirSync } from "node:fs";
import { gzipSync } from "node:zlib";

const dir = new URL("../pkg/", import.meta.url);
let wasm = 0;
let js = 0;
for (const name of readdirSync(dir).sort()) {
  if (!/\.(wasm|js|mjs|cjs)$/.test(name)) continue;
  const bytes = readFileSync(new URL(name, dir));
  const gz = gzipSync(bytes, { level: 9 }).length;
  if (name.endsWith(".wasm")) wasm += gz;
  else js += gz;
  console.log(`${name.padEnd(28)} ${String(bytes.length).padStart(9)} B  ${String(gz).padStart(8)} B gzip`);
}
console.log(`${"total (wasm + js)".padEnd(28)} ${"".padStart(9)}    ${String(wasm + js).padStart(8)} B gzip (wasm ${wasm}, js ${js})`);
