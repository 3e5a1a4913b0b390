import * as api from "chat-compaction";
import { runChecks } from "./checks.mjs";
import sample from "./sample.json";

const out = document.getElementById("out");
runChecks(api, sample).then(
  (summary) => {
    window.__packaging = { ok: true, summary };
    out.textContent = `PACKAGING-OK ${JSON.stringify(summary)}`;
  },
  (e) => {
    window.__packaging = { ok: false, error: String(e && e.stack ? e.stack : e) };
    out.textContent = `PACKAGING-FAIL ${window.__packaging.error}`;
  },
);
