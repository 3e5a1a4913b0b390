// A Cloudflare Worker importing "chat-compaction" (bundled with the `workerd` export
// condition, the .wasm kept as a separate module), run by `workerd test`.
import * as api from "chat-compaction";
import { runChecks } from "./checks.mjs";
import sample from "./sample.json";

export default {
  async fetch() {
    return Response.json(await runChecks(api, sample));
  },
  async test() {
    const summary = await runChecks(api, sample);
    console.log(`PACKAGING-OK ${JSON.stringify(summary)}`);
  },
};
