#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs every test (unit and integration, on
# SQLite and on the MariaDB at 127.0.0.1:3306). Same command in the README and in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npx vitest run "$@"
