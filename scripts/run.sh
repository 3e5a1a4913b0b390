#!/usr/bin/env bash
# The main job on a fresh machine: install the tools, build the npm package, and
# compact a real conversation with each offline mode, printing the notices.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
printf '\n== demo: compacting examples/data/tau-bench-airline-3.json\n'
node scripts/demo.mjs "$@"
printf '\n== the demo page: run `node scripts/www.mjs serve` and open the address it prints\n'
