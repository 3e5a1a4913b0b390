// Packaging tests against the REAL tarball: `npm pack` pkg/, install the .tgz into a
// small fixture project per runtime (templates beside this file, copied to a temp dir)
// and run the same behaviour checks (common/checks.mjs) in each runtime the package
// claims. One PASS/FAIL line per runtime, then "N passed, M failed".
//
//   node tests/js/packaging/run.mjs [--only name,name] [--keep]
//
// Needs pkg/ (bash scripts/build.sh) and the root devDependencies (npm ci); Chromium
// from Debian at /usr/bin/chromium (scripts/setup.sh installs it).
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, createReadStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { basename, dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { checkRules } from "../rules.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
// The built package; CHAT_COMPACTION_PKG_DIR points elsewhere (e.g. a patched copy).
const builtPkg = resolve(process.env.CHAT_COMPACTION_PKG_DIR || join(root, "pkg"));
let pkgDir; // a snapshot of builtPkg taken at the start, so a rebuild meanwhile cannot mix versions
const bin = (name) => join(root, "node_modules", ".bin", name);
const samplePath = join(root, "examples/data/tau-bench-airline-3.json");
const RUNTIME_TIMEOUT_S = 180;
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--no-first-run",
];

const args = process.argv.slice(2);
const keep = args.includes("--keep");
const onlyArg = args.find((a, i) => args[i - 1] === "--only" || a.startsWith("--only="));
const only = onlyArg ? onlyArg.replace(/^--only=/, "").split(",") : null;

// ---------------------------------------------------------------------------------------
// helpers

function run(cmd, argv, { cwd, env, timeout = 120_000, allowFail = false } = {}) {
  const r = spawnSync(cmd, argv, { cwd, env: { ...process.env, ...env }, encoding: "utf8", timeout, maxBuffer: 64 << 20 });
  const out = { code: r.status, signal: r.signal, stdout: r.stdout ?? "", stderr: r.stderr ?? "", error: r.error };
  if (!allowFail && (r.error || r.status !== 0)) {
    const what = r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit code ${r.status}`;
    throw new Error(`${basename(cmd)} ${argv.join(" ")} (in ${cwd ?? process.cwd()}): ${what}\n${tail(out.stdout)}${tail(out.stderr)}`);
  }
  return out;
}

function tail(text, lines = 25) {
  const t = text.trimEnd();
  if (!t) return "";
  const all = t.split("\n");
  return (all.length > lines ? ["…", ...all.slice(-lines)] : all).map((l) => `    ${l}`).join("\n") + "\n";
}

/** The PACKAGING-OK line a fixture prints, parsed; throws with the output otherwise. */
function okLine(result, what) {
  const line = result.stdout.split("\n").find((l) => l.startsWith("PACKAGING-OK "));
  if (!line) throw new Error(`${what}: no PACKAGING-OK line\n${tail(result.stdout)}${tail(result.stderr)}`);
  return JSON.parse(line.slice("PACKAGING-OK ".length));
}

function brief(summary) {
  return `deterministic ${summary.deterministic}, recency_preserving ${summary.recency_preserving}, structured ${summary.structured} (streamed, rebased), gemini ${summary.gemini} (validated)`;
}

let work;
let tarball;

/** Copies a fixture template to the temp dir, adds the shared checks, installs the tarball. */
function fixture(name) {
  const dir = join(work, name);
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(here, name), dir, { recursive: true });
  copyFileSync(join(here, "common/checks.mjs"), join(dir, "checks.mjs"));
  copyFileSync(join(here, "../rules.mjs"), join(dir, "rules.mjs"));
  copyFileSync(samplePath, join(dir, "sample.json"));
  // --include=dev: a fixture's devDependencies (the SDKs the typescript one compiles
  // against) even when a tool run in-process before (Vite) set NODE_ENV=production.
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", "--include=dev", tarball], { cwd: dir });
  const installed = join(dir, "node_modules/chat-compaction");
  const st = lstatSync(installed);
  if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`${installed} is a link, not an installed copy`);
  return dir;
}

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".cjs": "text/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** A tiny static file server on 127.0.0.1, random port. */
async function serve(dir) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = resolve(dir, "." + (path.endsWith("/") ? path + "index.html" : path));
    if (file !== dir && !file.startsWith(dir + sep)) {
      res.writeHead(403).end();
      return;
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    createReadStream(file).pipe(res);
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((ok) => server.close(ok)) };
}

let browser;
async function chromium() {
  if (browser) return browser;
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run scripts/setup.sh (as root it installs Debian's chromium)`);
  const { chromium } = await import("playwright-core");
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, timeout: 60_000 });
  return browser;
}

/** Loads a page, waits for window.__packaging, fails on page errors, console errors and failed requests. */
async function checkPage(url) {
  const b = await chromium();
  const page = await b.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  try {
    await page.goto(url, { waitUntil: "load", timeout: 30_000 });
    let outcome;
    try {
      await page.waitForFunction(() => window.__packaging, null, { timeout: 30_000 });
      outcome = await page.evaluate(() => window.__packaging);
    } catch (e) {
      throw new Error(`no result from ${url}: ${e.message.split("\n")[0]}\n${problems.join("\n")}`);
    }
    if (!outcome.ok) throw new Error(`${url}: ${outcome.error}\n${problems.join("\n")}`);
    if (problems.length) throw new Error(`${url}: ${problems.join("\n")}`);
    return outcome.summary;
  } finally {
    await page.close();
  }
}

// ---------------------------------------------------------------------------------------
// runtimes: each returns a short detail string or throws

const runtimes = [];
const runtime = (name, fn) => runtimes.push({ name, fn });

runtime("node-esm", () => {
  const dir = fixture("node-esm");
  const main = okLine(run(process.execPath, ["main.mjs"], { cwd: dir }), "import");
  const sync = okLine(run(process.execPath, ["init.mjs", "sync"], { cwd: dir }), "init sync");
  okLine(run(process.execPath, ["init.mjs", "async"], { cwd: dir }), "init async");
  if (sync.deterministic !== main.deterministic) throw new Error("chat-compaction/init gives other results than the main entry");
  // The README's first example, verbatim.
  copyFileSync(join(root, "examples/readme.mjs"), join(dir, "readme.mjs"));
  copyFileSync(samplePath, join(dir, "conversation.json"));
  const readme = run(process.execPath, ["readme.mjs"], { cwd: dir }).stdout;
  if (!/^🧹 Conversation compacted\nMode: Recency preserving\n/.test(readme) || !/^\d+ → \d+ tokens$/m.test(readme)) {
    throw new Error(`the README example printed:\n${readme}`);
  }
  return `Node ${process.version}, import → ${main.entry}; chat-compaction/init initializeSync + initialize; README example runs; ${brief(main)}`;
});

runtime("node-cjs", () => {
  const dir = fixture("node-cjs");
  const r = run(process.execPath, ["main.cjs"], { cwd: dir });
  const s = okLine(r, "require");
  if (/Warning/.test(r.stderr)) throw new Error(`require() printed a warning:\n${tail(r.stderr)}`);
  return `Node ${process.version}, require → ${s.entry}; ${brief(s)}`;
});

runtime("chromium-plain-page", async () => {
  const dir = fixture("browser-plain");
  const server = await serve(dir);
  try {
    const s = await checkPage(server.url + "index.html");
    await checkPage(server.url + "init.html");
    return `${(await chromium()).version()}, <script type="module"> + import map → browser.js; init.html: initialize(fetch(.wasm)); ${brief(s)}`;
  } finally {
    await server.close();
  }
});

runtime("chromium-vite-build", async () => {
  const dir = fixture("browser-vite");
  const { build, version } = await import("vite");
  await build({ root: dir, configFile: false, logLevel: "warn", build: { outDir: join(dir, "dist"), emptyOutDir: true } });
  const assets = readdirSync(join(dir, "dist/assets"));
  const wasm = assets.filter((f) => f.endsWith(".wasm"));
  if (wasm.length !== 1) throw new Error(`expected one .wasm asset in dist/assets, got ${JSON.stringify(assets)}`);
  const js = assets.filter((f) => f.endsWith(".js")).map((f) => readFileSync(join(dir, "dist/assets", f), "utf8")).join("\n");
  if (/readFileSync|Deno\.readFile/.test(js)) throw new Error("the Vite bundle holds a Node or Deno entry, not the browser one");
  const server = await serve(join(dir, "dist"));
  try {
    const s = await checkPage(server.url + "index.html");
    return `Vite ${version} production build (${wasm[0]} emitted), Chromium; ${brief(s)}`;
  } finally {
    await server.close();
  }
});

runtime("chromium-vite-dev", async () => {
  // The same page under `vite` (dev server, dependency pre-bundling), as users develop.
  const dir = fixture("browser-vite");
  const { createServer, version } = await import("vite");
  const server = await createServer({ root: dir, configFile: false, logLevel: "silent", server: { host: "127.0.0.1", port: 0, hmr: false } });
  await server.listen();
  try {
    const s = await checkPage(server.resolvedUrls.local[0]);
    return `Vite ${version} dev server, Chromium; ${brief(s)}`;
  } finally {
    await server.close();
  }
});

runtime("chromium-webpack", async () => {
  // webpack.config.mjs: the page (target "web") with a `new Worker(new URL(…))` chunk,
  // and worker.js built alone with target "webworker", whose resolver adds the
  // `worker` export condition. The page runs the checks in itself and in both workers.
  const dir = fixture("webpack");
  const version = JSON.parse(readFileSync(join(root, "node_modules/webpack/package.json"), "utf8")).version;
  run(process.execPath, [join(root, "node_modules/webpack-cli/bin/cli.js"), "--config", "webpack.config.mjs", "--no-color"], { cwd: dir });
  const dist = join(dir, "dist");
  const files = readdirSync(dist);
  const wasm = files.filter((f) => f.endsWith(".wasm"));
  if (wasm.length !== 1) throw new Error(`expected one .wasm asset in dist, got ${JSON.stringify(files)}`);
  const js = files.filter((f) => f.endsWith(".js")).map((f) => readFileSync(join(dist, f), "utf8")).join("\n");
  if (/readFileSync|Deno\.readFile/.test(js)) throw new Error("a webpack bundle holds a Node or Deno entry, not the browser one");
  copyFileSync(join(dir, "index.html"), join(dist, "index.html"));
  const server = await serve(dist);
  try {
    const s = await checkPage(server.url + "index.html");
    return `webpack ${version}: page + worker chunk (target web) and a standalone webworker build (\`worker\` condition), ${wasm[0]} emitted, Chromium; same results in page and workers; ${brief(s)}`;
  } finally {
    await server.close();
  }
});

runtime("workerd", async () => {
  const dir = fixture("workerd");
  const esbuild = await import("esbuild");
  const dist = join(dir, "dist");
  mkdirSync(dist, { recursive: true });
  // Like wrangler: the `workerd` condition, and every .wasm import kept as its own
  // module (a WebAssembly.Module in workerd) instead of being inlined.
  const wasmModules = {
    name: "wasm-modules",
    setup(b) {
      b.onResolve({ filter: /\.wasm$/ }, (a) => {
        const file = resolve(a.resolveDir, a.path);
        copyFileSync(file, join(dist, basename(file)));
        return { path: `./${basename(file)}`, external: true };
      });
    },
  };
  await esbuild.build({
    entryPoints: [join(dir, "worker.mjs")],
    outfile: join(dist, "worker.js"),
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    plugins: [wasmModules],
    logLevel: "silent",
  });
  const bundle = readFileSync(join(dist, "worker.js"), "utf8");
  if (!bundle.includes("./chat_compaction_bg.wasm")) throw new Error("the bundle does not import chat_compaction_bg.wasm: not the workerd entry?");
  const s = workerdTest(dir, "config.capnp");
  return `${s.version}, esbuild bundle (workerd condition, .wasm kept as a module), workerd test; ${brief(s)}`;
});

runtime("workerd-wrangler", () => {
  const dir = fixture("workerd");
  const out = join(dir, "wrangler-dist");
  const env = { WRANGLER_SEND_METRICS: "false", WRANGLER_LOG_PATH: join(work, "wrangler-logs"), NO_COLOR: "1", CI: "1" };
  const wrangler = join(root, "node_modules/wrangler/bin/wrangler.js");
  const version = run(process.execPath, [wrangler, "--version"], { cwd: dir, env }).stdout.trim().split("\n").pop();
  run(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", out], { cwd: dir, env });
  // wrangler names each .wasm module by its content hash; list what it wrote.
  const wasm = readdirSync(out).filter((f) => f.endsWith(".wasm"));
  if (wasm.length !== 1) throw new Error(`expected one .wasm module from wrangler, got ${JSON.stringify(readdirSync(out))}`);
  const bundle = readFileSync(join(out, "worker.js"), "utf8");
  if (!bundle.includes(`"./${wasm[0]}"`)) throw new Error(`wrangler's bundle does not import ${wasm[0]}: not the workerd entry?`);
  writeFileSync(
    join(dir, "wrangler.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = ( services = [ (name = "main", worker = .mainWorker) ] );
const mainWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "wrangler-dist/worker.js"),
    (name = "${wasm[0]}", wasm = embed "wrangler-dist/${wasm[0]}"),
  ],
  compatibilityDate = "2025-09-01",
);
`,
  );
  const s = workerdTest(dir, "wrangler.capnp");
  return `wrangler ${version} deploy --dry-run bundle, ${s.version} test; ${brief(s)}`;
});

/** `workerd test <config>` in dir: the worker's test() handler runs the checks. */
function workerdTest(dir, config) {
  const version = run(bin("workerd"), ["--version"]).stdout.trim();
  const r = run(bin("workerd"), ["test", config], { cwd: dir, timeout: 60_000 });
  const out = r.stdout + r.stderr;
  if (!/\[ PASS \] main\b/.test(out)) throw new Error(`no "[ PASS ] main" from workerd test\n${tail(out)}`);
  return { version, ...okLine({ stdout: out, stderr: "" }, "workerd test") };
}

runtime("deno", () => {
  const dir = fixture("deno");
  const env = { DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1", NO_COLOR: "1", DENO_DIR: join(work, "deno-dir") };
  const version = run(bin("deno"), ["--version"], { env }).stdout.split("\n")[0];
  const s = okLine(run(bin("deno"), ["run", "--allow-read", "main.mjs"], { cwd: dir, env }), "deno run");
  // Importing the package needs no permission at all (the .wasm is a source-phase import).
  okLine(run(bin("deno"), ["run", "no-permissions.mjs"], { cwd: dir, env }), "deno run with no permissions");
  return `${version}, node_modules project → ${s.entry}; ${brief(s)}; importing needs no permissions`;
});

runtime("bun", () => {
  const dir = fixture("bun");
  const version = run(bin("bun"), ["--version"]).stdout.trim();
  const s = okLine(run(bin("bun"), ["--no-install", "main.mjs"], { cwd: dir, env: { NO_COLOR: "1" } }), "bun");
  return `Bun ${version} → ${s.entry}; ${brief(s)}`;
});

runtime("typescript", () => {
  const dir = fixture("typescript");
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  const version = run(process.execPath, [tsc, "--version"]).stdout.trim();
  run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir });
  run(process.execPath, [tsc, "-p", "tsconfig.bundler.json"], { cwd: dir });
  // A Node-only project: @types/node and no DOM lib.
  const nodeConfig = {
    compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022"], skipLibCheck: false, types: ["node"], typeRoots: [join(root, "node_modules/@types")] },
    files: ["consumer-node.ts"],
  };
  writeFileSync(join(dir, "tsconfig.node.json"), JSON.stringify(nodeConfig, null, 2));
  run(process.execPath, [tsc, "-p", "tsconfig.node.json"], { cwd: dir });
  // CommonJS under node16 resolution (TS1479 unless `require` has CommonJS types of its own).
  const node16 = { compilerOptions: { ...nodeConfig.compilerOptions, module: "node16", moduleResolution: "node16", lib: ["es2022", "dom"], types: [] }, files: ["consumer-cjs.cts"] };
  writeFileSync(join(dir, "tsconfig.node16.json"), JSON.stringify(node16, null, 2));
  run(process.execPath, [tsc, "-p", "tsconfig.node16.json"], { cwd: dir });
  // Neither the DOM lib nor @types/node: make sure neither was loaded after all.
  run(process.execPath, [tsc, "-p", "tsconfig.bare.json"], { cwd: dir });
  const bareFiles = run(process.execPath, [tsc, "-p", "tsconfig.bare.json", "--listFilesOnly"], { cwd: dir }).stdout;
  if (/lib\.dom\.d\.ts|@types[\\/]node/.test(bareFiles)) throw new Error(`tsconfig.bare.json loaded the DOM lib or @types/node:\n${tail(bareFiles)}`);
  const sdks = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).devDependencies;
  const sdkList = Object.entries(sdks).filter(([n]) => !n.startsWith("@types/")).map(([n, v]) => `${n}@${v}`).join(", ");
  const expectErrors = ["consumer.ts", "consumer-sdk.ts", "consumer-bare.ts"].map((f) => (readFileSync(join(dir, f), "utf8").match(/@ts-expect-error/g) ?? []).length).reduce((a, b) => a + b);
  return `${version} --strict --noEmit, skipLibCheck off: nodenext (ESM + .cts require), node16 (.cts require), bundler, Node-only (@types/node, no DOM), and bare (lib es2022, neither DOM nor @types/node); the SDKs' own types in and out without a cast (${sdkList}); ${expectErrors} @ts-expect-error rejections hold`;
});

const ALLOWED = [/^[^/]+\.js$/, /^[^/]+\.cjs$/, /^[^/]+\.d\.c?ts$/, /^chat_compaction_bg\.wasm$/, /^bin\/cli\.js$/, /^bin\/summarizers\.js$/, /^README\.md$/, /^docs\/[a-z-]+\.md$/, /^LICENSE$/, /^THIRD-PARTY-NOTICES$/, /^CHANGELOG\.md$/, /^package\.json$/];

runtime("pack-contents", () => {
  const dry = JSON.parse(run("npm", ["pack", "--dry-run", "--json", "--loglevel=error"], { cwd: pkgDir }).stdout)[0];
  const files = dry.files.map((f) => f.path).sort();
  const strays = files.filter((f) => !ALLOWED.some((re) => re.test(f)));
  if (strays.length) throw new Error(`files that do not belong in the package: ${strays.join(", ")}`);
  const inTarball = run("tar", ["-tzf", tarball]).stdout.trim().split("\n").map((f) => f.replace(/^package\//, "")).sort();
  if (JSON.stringify(inTarball) !== JSON.stringify(files)) throw new Error(`tarball ${JSON.stringify(inTarball)} differs from npm pack --dry-run ${JSON.stringify(files)}`);
  // Every file the manifest points at is in the tarball.
  const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const targets = new Set();
  const walk = (v) => (typeof v === "string" ? targets.add(v.replace(/^\.\//, "")) : v && typeof v === "object" && Object.values(v).forEach(walk));
  walk(manifest.exports);
  walk(manifest.bin);
  for (const k of ["main", "module", "types"]) walk(manifest[k]);
  const missing = [...targets].filter((t) => !files.includes(t));
  if (missing.length) throw new Error(`package.json points at files missing from the tarball: ${missing.join(", ")}`);
  for (const need of ["chat_compaction_bg.wasm", "chat_compaction.js", "api.js", "toml.js", "README.md", "docs/options.md", "LICENSE", "THIRD-PARTY-NOTICES", "CHANGELOG.md", "bin/cli.js"]) {
    if (!files.includes(need)) throw new Error(`${need} missing from the tarball`);
  }
  // Every relative import / require / new URL(…, import.meta.url) in the shipped files
  // points at a shipped file (a wasm-bindgen snippets/ dir left out by "files" would not).
  const refs = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*|\bnew URL\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g;
  const dangling = [];
  for (const f of files.filter((f) => /\.(c?js|d\.ts)$/.test(f))) {
    // Line comments are prose (a usage example may name another file).
    const text = readFileSync(join(pkgDir, f), "utf8").replace(/^\s*\/\/.*$/gm, "");
    for (const [, spec] of text.matchAll(refs)) {
      let target = join(dirname(f), spec).split(sep).join("/");
      if (f.endsWith(".d.ts")) target = target.replace(/\.js$/, ".d.ts");
      if (!files.includes(target)) dangling.push(`${f} → ${spec}`);
    }
  }
  if (dangling.length) throw new Error(`shipped files refer to files not in the tarball: ${dangling.join(", ")}`);
  return `${files.length} files, ${(dry.size / 1024).toFixed(0)} KB packed / ${(dry.unpackedSize / 1024).toFixed(0)} KB unpacked; every manifest target and relative import present`;
});

runtime("cli-npx", () => {
  const dir = fixture("cli");
  const r = run("npx", ["--no", "chat-compaction", "compact", "--mode", "recency_preserving", "--context-window", "8000", "sample.json"], { cwd: dir });
  let out;
  try {
    out = JSON.parse(r.stdout);
  } catch (e) {
    throw new Error(`stdout is not JSON: ${e.message}\n${tail(r.stdout)}`);
  }
  const sample = JSON.parse(readFileSync(join(dir, "sample.json"), "utf8"));
  if (!Array.isArray(out) || out.length >= sample.length) throw new Error(`expected fewer than ${sample.length} messages, got ${out?.length}`);
  checkRules("openai", out);
  if (!r.stderr.startsWith("🧹 Conversation compacted\nMode: Recency preserving")) throw new Error(`stderr lacks the notice:\n${tail(r.stderr)}`);
  const est = run("npx", ["--no", "chat-compaction", "estimate", "sample.json"], { cwd: dir }).stdout.trim();
  if (!/^\d+$/.test(est) || Number(est) < 1000) throw new Error(`estimate printed ${JSON.stringify(est)}`);
  const bad = run("npx", ["--no", "chat-compaction", "compact", "missing.json"], { cwd: dir, allowFail: true });
  if (bad.code === 0) throw new Error("compact of a missing file exited 0");
  const valid = run("npx", ["--no", "chat-compaction", "validate", "sample.json"], { cwd: dir, allowFail: true });
  if (valid.code !== 0 || valid.stdout !== `valid (openai, ${sample.length} messages)\n`) throw new Error(`validate of the sample: exit ${valid.code}\n${tail(valid.stdout)}${tail(valid.stderr)}`);
  writeFileSync(join(dir, "broken.json"), JSON.stringify([...sample, { role: "tool", tool_call_id: "nope", content: "x" }]));
  const invalid = run("npx", ["--no", "chat-compaction", "validate", "broken.json"], { cwd: dir, allowFail: true });
  if (invalid.code !== 1 || !invalid.stdout.startsWith(`messages[${sample.length}] ORPHAN_RESULT: `)) throw new Error(`validate of a broken file: exit ${invalid.code}\n${tail(invalid.stdout)}${tail(invalid.stderr)}`);
  return `npx chat-compaction compact → ${out.length} messages on stdout, notice on stderr; estimate → ${est}; missing file → exit ${bad.code}; validate → exit 0 / exit 1 with ORPHAN_RESULT`;
});

// ---------------------------------------------------------------------------------------
// driver

async function main() {
  const started = Date.now();
  let passed = 0;
  let failed = 0;
  const selected = runtimes.filter((r) => !only || only.includes(r.name));
  if (only && selected.length !== only.length) {
    console.error(`unknown runtime in --only; known: ${runtimes.map((r) => r.name).join(", ")}`);
    process.exit(2);
  }
  work = mkdtempSync(join(tmpdir(), "chat-compaction-packaging-"));
  try {
    try {
      if (!existsSync(join(builtPkg, "package.json")) || !existsSync(join(builtPkg, "chat_compaction_bg.wasm"))) {
        throw new Error(`${builtPkg} is not built: run bash scripts/build.sh`);
      }
      pkgDir = join(work, "pkg");
      cpSync(builtPkg, pkgDir, { recursive: true });
      const packed = JSON.parse(run("npm", ["pack", "--json", "--loglevel=error", "--pack-destination", work], { cwd: pkgDir }).stdout)[0];
      tarball = join(work, packed.filename);
      console.log(`tarball: ${packed.filename} (${packed.entryCount} files, ${(packed.size / 1024).toFixed(0)} KB), work dir ${work}`);
    } catch (e) {
      console.log(`FAIL  npm pack: ${e.message}`);
      for (const r of selected) console.log(`FAIL  ${r.name}: not run (no tarball)`);
      console.log(`0 passed, ${selected.length} failed`);
      process.exitCode = 1;
      return;
    }
    for (const r of selected) {
      const t0 = Date.now();
      try {
        let timer;
        const limit = new Promise((_, fail) => {
          timer = setTimeout(() => fail(new Error(`timed out after ${RUNTIME_TIMEOUT_S} s`)), RUNTIME_TIMEOUT_S * 1000);
        });
        const detail = await Promise.race([Promise.resolve().then(r.fn), limit]).finally(() => clearTimeout(timer));
        passed++;
        console.log(`PASS  ${r.name} (${((Date.now() - t0) / 1000).toFixed(1)} s): ${detail}`);
      } catch (e) {
        failed++;
        console.log(`FAIL  ${r.name} (${((Date.now() - t0) / 1000).toFixed(1)} s): ${e.message}`);
      }
    }
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (keep) console.log(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  console.log(`packaging tests took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`${passed} passed, ${failed} failed`);
  if (failed) process.exitCode = 1;
}

await main();
