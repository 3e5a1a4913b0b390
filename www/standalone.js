// The entry of the single-file page (node scripts/www.mjs build): esbuild bundles
// this with the package's manual-initialisation entry, the .wasm as bytes and the
// airline sample as text, so the page opens from file:// with no server and no
// network at all.
import wasm from "../pkg/chat_compaction_bg.wasm";
import tauBench from "../examples/data/tau-bench-airline-3.json";
import * as api from "../pkg/init.js";
import { start, tauBenchSample } from "./app.js";

const status = document.getElementById("load-status");
try {
  await api.initialize(wasm);
  start(api, { extraSamples: [tauBenchSample(() => tauBench)] });
} catch (e) {
  status.classList.add("failed");
  status.textContent = `The compaction module did not load: ${e?.message ?? e}`;
  document.body.dataset.ready = "failed";
  throw e;
}
