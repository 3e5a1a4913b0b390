// Two webpack builds of one app, as projects ship them:
// - "page" (target "web"): main.js imports the package and starts worker.js with
//   `new Worker(new URL("./worker.js", import.meta.url))`, which webpack builds as a
//   chunk of this build;
// - "worker" (target "webworker"): worker.js built on its own, the classic web-worker
//   build, whose resolver adds the `worker` export condition to the browser ones.
// Each must resolve "chat-compaction" to an entry that runs in a browser.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const common = {
  mode: "production",
  context: here,
  devtool: false,
  performance: { hints: false },
};

export default [
  {
    ...common,
    name: "page",
    target: "web",
    entry: "./main.js",
    output: { path: resolve(here, "dist"), filename: "main.js" },
  },
  {
    ...common,
    name: "worker",
    target: "webworker",
    entry: "./worker.js",
    output: { path: resolve(here, "dist"), filename: "standalone-worker.js" },
  },
];
