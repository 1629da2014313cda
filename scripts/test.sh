#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs every test (unit and integration, on
# SQLite and on the MariaDB at 127.0.0.1:3306). Same command in the README and in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
results="$(mktemp)"
status=0
npx vitest run --reporter=default --reporter=json --outputFile="$results" "$@" || status=$?
# One plain closing line that any CI can read.
node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed`);' "$results" || true
rm -f "$results"
exit "$status"
