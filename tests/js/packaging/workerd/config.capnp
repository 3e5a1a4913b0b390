# workerd configuration: one worker, the bundled script plus the package's .wasm as a
# compiled-module import (the way wrangler uploads it). `workerd test config.capnp`.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .mainWorker) ],
);

const mainWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "dist/worker.js"),
    (name = "chat_compaction_bg.wasm", wasm = embed "dist/chat_compaction_bg.wasm"),
  ],
  compatibilityDate = "2025-09-01",
);
