#!/usr/bin/env bash
# Installs everything the build and the tests need, skipping what is already there.
# Safe to run again and again (CI runs it on a fresh machine).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== setup: %s\n' "$*"; }

step "wasm32 target"
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi

step "wasm-bindgen CLI (the version Cargo.lock pins)"
want=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [[ "$have" != "$want" ]]; then
  # --locked fails on this registry mirror (an index gap), so plain install.
  cargo install wasm-bindgen-cli --version "$want" --force
fi

step "npm tools (binaryen's wasm-opt, test runtimes)"
if [[ ! -d node_modules ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund
fi

step "Chromium for the browser tests (Debian's chromium + chromium-driver)"
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
  if [[ $(id -u) -eq 0 ]]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
  else
    echo "setup: cannot install chromium (not root, no sudo): the Chromium packaging tests will fail" >&2
  fi
fi
