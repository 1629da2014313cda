#!/usr/bin/env bash
# .ci/run's image step: builds deploy/Dockerfile from the checkout and runs tests/container (the image
# as docs/deploy.md runs it; the API, two workers, MariaDB, Redis and an S3 store as containers). A
# machine where no container engine can start skips it and says so.
set -euo pipefail
cd "$(dirname "$0")/../.."
status=0
bash scripts/container/engine.sh || status=$?
if [ "$status" = 3 ]; then
  echo "container tests: SKIPPED (no container engine could be started on this machine; see above)"
  exit 0
elif [ "$status" != 0 ]; then
  exit "$status"
fi
# The base image first, outside the tests' time limits (debootstrap takes a few minutes the first time).
bash scripts/container/local-base-image.sh >/dev/null
DAGUERRE_CONTAINER_TESTS=1 npx vitest run --project container "$@"
