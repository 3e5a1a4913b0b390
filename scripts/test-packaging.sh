#!/usr/bin/env bash
# Packaging tests on the REAL tarball: npm pack pkg/, install the .tgz into a fixture
# project per runtime (Node ESM + CJS, Chromium: plain page, Vite build, Vite dev; workerd via
# esbuild and via wrangler, Deno, Bun, TypeScript, tarball contents, the CLI via npx).
# One PASS/FAIL line per runtime, then "N passed, M failed"; exits non-zero on a failure.
# Needs pkg/ (bash scripts/build.sh) and the tools from bash scripts/setup.sh.
#   bash scripts/test-packaging.sh [--only node-esm,deno] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
exec node tests/js/packaging/run.mjs "$@"
