// CPU time of the proxy on requests built from real Claude Code sessions, in
// workerd: `npm run bench:real` (which first writes bench/real-requests.json from
// the corpus). Each proxy case is set beside what any JS proxy at least pays for
// the same body: JSON.parse + JSON.stringify.
import worker from "../src/index.js";
import { compactBody, measureBody } from "chat-compaction";
import requests from "./real-requests.json";

globalThis.fetch = async (url, init) => {
  await new Response(init.body).arrayBuffer();
  return new Response('{"id":"stub"}', { headers: { "content-type": "application/json" } });
};

const post = (body) => new Request("https://proxy.example/v1/messages", { method: "POST", headers: { "content-type": "application/json" }, body });

async function call(env, body, expect) {
  const response = await worker.fetch(post(body), env);
  await response.arrayBuffer();
  const notice = response.headers.get("x-chat-compaction") ?? "";
  if (response.status !== 200 || !notice.startsWith(`mode=${expect};`)) throw new Error(`${response.status} ${notice}`);
}

export default {
  bench(b, env) {
    for (const [size, request] of Object.entries(requests)) {
      const body = JSON.stringify(request);
      // The model's window (200K) compacts the 200K request and the 800K one; a 1M window lets the 200K one through.
      b.run(`real ${size}: JSON.parse + JSON.stringify`, () => b.blackBox(JSON.stringify(JSON.parse(body))));
      const bytes = new TextEncoder().encode(body);
      b.run(`real ${size}: measureBody alone`, () => b.blackBox(measureBody(bytes, { format: "anthropic", contextWindow: 4_000_000 })));
      b.run(`real ${size}: compactBody alone`, () => b.blackBox(compactBody(bytes, { format: "anthropic", mode: "recency_preserving" })));
      b.run(`real ${size}: proxy, compacted`, () => call(env, body, "recency_preserving"));
      if (size === "200K") {
        const roomy = { ...env, COMPACTION_OPTIONS: { contextWindow: 1_000_000 } };
        b.run(`real ${size}: proxy, decided that it fits`, () => call(roomy, body, "none"));
      }
    }
  },
};
