#!/usr/bin/env node
// The demo page in www/: serve it, or build a single-file copy of it.
//
//   node scripts/www.mjs serve [--port 8080] [--host 127.0.0.1]
//       serves www/ with the built package (pkg/) and the sample data, prints
//       the address to open (http://127.0.0.1:8080/www/); Ctrl+C stops it.
//   node scripts/www.mjs build [--out target/www]
//       writes OUT/chat-compaction.html: the page, its script, the .wasm and the
//       samples in one file that opens from file:// with no server or network.
//
// Both need the built package: bash scripts/build.sh.
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".md": "text/plain; charset=utf-8",
};

/** What the page may load: the page itself, the built package, the sample data. */
const SERVED = ["www", "pkg", "examples/data"];

/**
 * A static server for the page on `host` (127.0.0.1) and `port` (0: any free
 * one). Resolves to `{url, origin, server, close()}`; `url` is the page's address.
 * `onRequest(path)` sees every request path; `pkgDir` serves another copy of
 * the built package as /pkg/ (the tests serve a snapshot, safe from a rebuild).
 */
export async function serveWww({ host = "127.0.0.1", port = 0, onRequest, pkgDir } = {}) {
  const server = createServer((req, res) => {
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    onRequest?.(path, req);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/" || path === "/www") {
      res.writeHead(302, { location: "/www/" }).end();
      return;
    }
    let file = resolve(root, `.${path.endsWith("/") ? `${path}index.html` : path}`);
    const rel = relative(root, file).split(sep).join("/");
    if (pkgDir && rel.startsWith("pkg/")) file = join(pkgDir, rel.slice(4));
    if (!SERVED.some((dir) => rel === dir || rel.startsWith(`${dir}/`)) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end(`not found: ${path}\n`);
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store", "x-content-type-options": "nosniff" });
    if (req.method === "HEAD") res.end();
    else createReadStream(file).pipe(res);
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, ok);
  });
  const origin = `http://${host}:${server.address().port}`;
  return { url: `${origin}/www/`, origin, server, close: () => new Promise((ok) => { server.closeAllConnections?.(); server.close(ok); }) };
}

/**
 * Bundles the page into one HTML file; returns its path. `pkgDir` bundles
 * another copy of the built package.
 */
export async function buildWww({ out = join(root, "target/www"), pkgDir } = {}) {
  const { build } = await import("esbuild");
  const pkgAlias = pkgDir && {
    name: "pkg-dir",
    setup(b) {
      b.onResolve({ filter: /^\.\.\/pkg\// }, (args) => ({ path: join(pkgDir, args.path.slice("../pkg/".length)) }));
    },
  };
  const bundle = await build({
    plugins: pkgAlias ? [pkgAlias] : [],
    entryPoints: [join(root, "www/standalone.js")],
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    write: false,
    loader: { ".wasm": "binary", ".json": "text" },
    logLevel: "error",
  });
  const script = bundle.outputFiles[0].text.replace(/<\/(script)/gi, "<\\/$1");
  const css = readFileSync(join(root, "www/style.css"), "utf8");
  let html = readFileSync(join(root, "www/index.html"), "utf8");
  const swap = (from, to) => {
    if (!html.includes(from)) throw new Error(`www/index.html no longer contains ${from}`);
    html = html.replace(from, () => to);
  };
  swap('<link rel="stylesheet" href="./style.css">', `<style>\n${css}</style>`);
  swap('<script type="module" src="./main.js"></script>', `<script type="module">${script}</script>`);
  mkdirSync(out, { recursive: true });
  const file = join(out, "chat-compaction.html");
  writeFileSync(file, html);
  return file;
}

function flag(args, name, fallback) {
  const at = args.indexOf(`--${name}`);
  if (at >= 0 && args[at + 1] !== undefined) return args[at + 1];
  const inline = args.find((a) => a.startsWith(`--${name}=`));
  return inline ? inline.slice(name.length + 3) : fallback;
}

async function main(args) {
  const [command = "serve"] = args;
  if (!existsSync(join(root, "pkg/browser.js"))) {
    console.error("www: pkg/ is not built; run: bash scripts/build.sh");
    process.exit(1);
  }
  if (command === "serve") {
    const wanted = Number(flag(args, "port", "8080"));
    const host = flag(args, "host", "127.0.0.1");
    let served;
    try {
      served = await serveWww({ host, port: wanted });
    } catch (e) {
      if (e?.code !== "EADDRINUSE") throw e;
      served = await serveWww({ host, port: 0 });
      console.log(`www: port ${wanted} is taken; using ${served.server.address().port}`);
    }
    console.log(`www: the demo page is at ${served.url}`);
    console.log("www: Ctrl+C stops the server");
    const stop = () => served.close().then(() => process.exit(0));
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  } else if (command === "build") {
    const file = await buildWww({ out: resolve(flag(args, "out", join(root, "target/www"))) });
    console.log(`www: wrote ${relative(process.cwd(), file)} (${(statSync(file).size / 1024).toFixed(0)} KB); open ${pathToFileURL(file).href}`);
  } else {
    console.error("usage: node scripts/www.mjs serve [--port N] [--host H] | build [--out DIR]");
    process.exit(2);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main(process.argv.slice(2)).catch((e) => {
    console.error(`www: ${e?.stack ?? e}`);
    process.exit(1);
  });
}
