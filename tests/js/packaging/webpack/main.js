import * as api from "chat-compaction";
import { runChecks } from "./checks.mjs";
import sample from "./sample.json";

/** The summary a worker posts back, or its error. */
function answer(worker, what) {
  return new Promise((ok, fail) => {
    worker.onmessage = (e) => (e.data.ok ? ok(e.data.summary) : fail(new Error(`${what}: ${e.data.error}`)));
    worker.onerror = (e) => fail(new Error(`${what}: ${e.message || "failed to load"}`));
  }).finally(() => worker.terminate());
}

async function all() {
  const page = await runChecks(api, sample);
  // A worker chunk of this build (webpack rewrites the URL to the emitted chunk).
  const chunk = await answer(new Worker(new URL("./worker.js", import.meta.url)), "worker chunk");
  // The standalone build with target "webworker" (the `worker` condition).
  const standalone = await answer(new Worker("./standalone-worker.js"), "standalone webworker build");
  for (const [what, s] of [["worker chunk", chunk], ["standalone webworker build", standalone]]) {
    if (JSON.stringify(s) !== JSON.stringify(page)) throw new Error(`${what} gives other results than the page: ${JSON.stringify(s)} vs ${JSON.stringify(page)}`);
  }
  return page;
}

const out = document.getElementById("out");
all().then(
  (summary) => {
    window.__packaging = { ok: true, summary };
    out.textContent = `PACKAGING-OK ${JSON.stringify(summary)}`;
  },
  (e) => {
    window.__packaging = { ok: false, error: String(e && e.stack ? e.stack : e) };
    out.textContent = `PACKAGING-FAIL ${window.__packaging.error}`;
  },
);
