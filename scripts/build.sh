#!/usr/bin/env bash
# Builds the npm package into pkg/: cargo → wasm-bindgen → wasm-opt → package files.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== build: %s\n' "$*"; }
wasm=target/wasm32-unknown-unknown/release/chat_compaction.wasm

step "cargo build (wasm32, release)"
cargo build --release --target wasm32-unknown-unknown --lib --no-default-features

step "wasm-bindgen --target web"
rm -rf pkg
wasm-bindgen --target web --no-typescript --out-dir pkg --out-name chat_compaction "$wasm"

step "wasm-opt -Oz"
# Measured at equal speed (docs/design-size.md): inlining functions that have
# one caller only up to 20 bytes, no local-cse and running to a fixed point save
# about 10 KB gzipped against plain -Oz; the low 1 KB of memory is never used
# (Rust's stack sits below the data and grows down from 1 MB).
node node_modules/binaryen/bin/wasm-opt -Oz -ocimfs 20 -sp local-cse --converge --low-memory-unused \
  --strip-producers --strip-target-features --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
  pkg/chat_compaction_bg.wasm -o pkg/chat_compaction_bg.wasm

step "package files"
cp -r pkg-templates/. pkg/
cp README.md LICENSE CHANGELOG.md pkg/
rm -rf pkg/docs && cp -r docs pkg/docs
# The CLI's summarizers are docs/llm-modes.md's fetch examples, one source for both.
cp examples/summarizers.mjs pkg/bin/summarizers.js
chmod +x pkg/bin/cli.js

step "minify the JS the package loads (api.js and the wasm-bindgen glue)"
# Local names shortened, whitespace and comments dropped: −5.5 KB gzipped. The
# readable source stays in pkg-templates/ (exports and error names are kept).
# Lines end by 500 characters (+0.1 KB): Node prints the source line of an uncaught
# error, and one line of the whole file flooded the terminal.
for js in api.js chat_compaction.js; do
  node_modules/.bin/esbuild "pkg/$js" --minify --format=esm --target=es2022 --line-limit=500 \
    --log-level=warning --allow-overwrite --outfile="pkg/$js"
done

step "the TOML reader parseConfig loads on its first call (smol-toml bundled in)"
node_modules/.bin/esbuild pkg-templates/toml.js --bundle --minify --format=esm --target=es2022 \
  --line-limit=500 --legal-comments=none --log-level=warning --outfile=pkg/toml.js
{
  echo "chat-compaction's toml.js bundles smol-toml $(node -p 'JSON.parse(require("fs").readFileSync("node_modules/smol-toml/package.json", "utf8")).version'):"
  echo
  cat node_modules/smol-toml/LICENSE
} > pkg/THIRD-PARTY-NOTICES
# CommonJS consumers of TypeScript's node16 resolution read types of their own.
cp pkg/index.d.ts pkg/index.d.cts

step "sizes"
node scripts/sizes.mjs
