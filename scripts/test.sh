#!/usr/bin/env bash
# Every test, fast checks first: format, lints, Rust tests, the wasm build, the JS suite.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== test: %s\n' "$*"; }

bash scripts/setup.sh

# The corpus tests fail instead of skipping when ../shared/corpus is missing.
export REQUIRE_CORPUS=1

step "cargo fmt --check"
cargo fmt --check

step "core modules do not import wasm-bindgen"
if grep -rlE 'wasm_bindgen|js_sys' src | grep -v '^src/wasm/'; then
  echo "wasm-bindgen used outside src/wasm/" >&2
  exit 1
fi

step "cargo clippy"
cargo clippy --all-targets -- -D warnings

step "cargo test"
cargo test

step "wasm build"
bash scripts/build.sh

step "package size within size-budget.json"
node scripts/sizes.mjs --check

step "JS tests (Node)"
node --test tests/js/

step "packaging tests (the npm tarball in every runtime)"
bash scripts/test-packaging.sh
