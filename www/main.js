// The page's entry when it is served from the repository root (www/ next to the
// built package in pkg/): loads the package, adds the real sample that lives in
// examples/data/, and starts the page. scripts/www.mjs build makes a single-file
// version of the page that needs no server (standalone.js).
const status = document.getElementById("load-status");

try {
  const api = await import("../pkg/browser.js");
  const { start, tauBenchSample } = await import("./app.js");
  const tauBench = new URL("../examples/data/tau-bench-airline-3.json", import.meta.url);
  const sample = tauBenchSample(async () => {
    const response = await fetch(tauBench);
    if (!response.ok) throw new Error(`${tauBench.pathname}: HTTP ${response.status}`);
    return response.text();
  });
  start(api, { extraSamples: [sample] });
} catch (e) {
  status.classList.add("failed");
  status.textContent = `The compaction module did not load (${e?.message ?? e}). Build it with "bash scripts/build.sh" and serve the repository root, e.g. "node scripts/www.mjs serve", then open /www/.`;
  document.body.dataset.ready = "failed";
  throw e;
}
