#!/usr/bin/env bash
# Makes a container engine answer on this machine, or says why it cannot (exit 3): Debian's docker.io
# installed when missing, dockerd started in the background when none runs (machines without
# systemd). Used by scripts/container/test.sh (.ci/run's image step) and by hand (docs/deploy.md).
set -euo pipefail

if docker info >/dev/null 2>&1; then exit 0; fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "container: no container engine answers, and this user cannot start one (not root, no sudo)" >&2
    exit 3
  fi
  SUDO="sudo"
fi
if ! command -v dockerd >/dev/null 2>&1; then
  echo "container: installing docker.io (apt)"
  if ! ($SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends docker.io >/dev/null); then
    echo "container: no container engine: docker.io could not be installed" >&2
    exit 3
  fi
fi
if ! pgrep -x dockerd >/dev/null 2>&1; then
  echo "container: starting dockerd"
  log="${TMPDIR:-/tmp}/dockerd.log"
  $SUDO sh -c "nohup dockerd >'$log' 2>&1 &"
fi
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then exit 0; fi
  sleep 1
done
echo "container: no container engine: dockerd did not answer within 60 s (${TMPDIR:-/tmp}/dockerd.log)" >&2
exit 3
