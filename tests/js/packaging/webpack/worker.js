// Runs the checks inside a web worker and posts the outcome to the page.
import * as api from "chat-compaction";
import { runChecks } from "./checks.mjs";
import sample from "./sample.json";

runChecks(api, sample).then(
  (summary) => self.postMessage({ ok: true, summary }),
  (e) => self.postMessage({ ok: false, error: String(e && e.stack ? e.stack : e) }),
);
