// CPU time of the proxy per request, in workerd: `workerd bench bench/wrangler.jsonc`
// (npm run bench). The upstream is a stub (global fetch replaced below) that reads
// the forwarded body and answers 200, so only the Worker's own work is timed; the
// "cpu median" column is the figure README.md quotes.
import worker from "../src/index.js";
import { compactBody, compactSync, measure, measureBody } from "chat-compaction";
import { request } from "./conversation.js";

globalThis.fetch = async (url, init) => {
  await new Response(init.body).arrayBuffer();
  return new Response('{"id":"stub"}', { headers: { "content-type": "application/json" } });
};

const post = (path, body) => new Request(`https://proxy.example${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });

async function call(env, path, body, expect) {
  const response = await worker.fetch(post(path, body), env);
  await response.arrayBuffer();
  const notice = response.headers.get("x-chat-compaction") ?? "";
  if (response.status !== 200 || !notice.startsWith(`mode=${expect};`)) throw new Error(`${path}: ${response.status} ${notice}`);
}

export default {
  bench(b, env) {
    const anthropic = JSON.stringify(request("anthropic", 200_000));
    const openai = JSON.stringify(request("openai", 200_000));
    // The same Anthropic request under a 1M-token window: measured, then forwarded as is.
    const roomy = { ...env, COMPACTION_OPTIONS: { contextWindow: 1_000_000 } };

    b.run("proxy: 200K-token Anthropic request, compacted", () => call(env, "/v1/messages", anthropic, "recency_preserving"));
    b.run("proxy: 200K-token OpenAI request, compacted", () => call(env, "/v1/chat/completions", openai, "recency_preserving"));
    b.run("proxy: 200K-token request that fits, forwarded as is", () => call(roomy, "/v1/messages", anthropic, "none"));
    // Smaller requests over a 32K window, to show how the cost scales.
    const window32k = { ...env, COMPACTION_OPTIONS: { contextWindow: 32_000 } };
    for (const size of [100_000, 50_000]) {
      const body = JSON.stringify(request("anthropic", size));
      b.run(`proxy: ${size / 1000}K-token Anthropic request, compacted (32K window)`, () => call(window32k, "/v1/messages", body, "recency_preserving"));
    }

    // The yardstick any JS proxy pays at least: reading the body as objects and writing it back.
    b.run("yardstick: JSON.parse + JSON.stringify", () => b.blackBox(JSON.stringify(JSON.parse(anthropic))));
    // The bytes path the proxy takes: one call decides (and compacts) from the body's bytes.
    const bytes = new TextEncoder().encode(anthropic);
    b.run("bytes: measureBody (deciding)", () => b.blackBox(measureBody(bytes, { format: "anthropic", contextWindow: 1_000_000 })));
    b.run("bytes: compactBody (deciding and compacting)", () => b.blackBox(compactBody(bytes, { format: "anthropic", mode: "recency_preserving" })));

    // Where the time goes on the objects path (Anthropic request): each case adds one step to the previous one.
    const options = { format: "anthropic" };
    b.run("steps: JSON.parse", () => b.blackBox(JSON.parse(anthropic)));
    b.run("steps: + measure", () => b.blackBox(measure(JSON.parse(anthropic), options)));
    b.run("steps: + compactSync", () => {
      const body = JSON.parse(anthropic);
      measure(body, options);
      b.blackBox(compactSync(body, { ...options, mode: "recency_preserving" }));
    });
    // What compacting alone costs (a Worker that compacts every request, not deciding first).
    b.run("alone: JSON.parse + compactSync", () => b.blackBox(compactSync(JSON.parse(anthropic), { ...options, mode: "recency_preserving" })));
    b.run("steps: + measure of the result + JSON.stringify", () => {
      const body = JSON.parse(anthropic);
      measure(body, options);
      const result = compactSync(body, { ...options, mode: "recency_preserving" });
      measure(result.request, options);
      b.blackBox(JSON.stringify(result.request));
    });
  },
};
