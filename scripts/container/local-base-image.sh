#!/usr/bin/env bash
# Prints the name of a base image for deploy/Dockerfile. When the registry's node:24-bookworm-slim
# can be pulled, that is it. Where no image registry is reachable (machines whose only way out is the
# npm registry and Debian's mirror), it builds a stand-in once and keeps it: Debian bookworm from
# the mirror (debootstrap, minbase), Node 24 and npm from the npm registry, and the machine's extra
# certificate authorities (a TLS-intercepting proxy's), as the official image would be on this network.
set -euo pipefail
cd "$(dirname "$0")/../.."

official="node:24-bookworm-slim"
local_tag="daguerre-local/node:24-bookworm-slim"
# What is already here first (no pull attempt on every call), then the registry, then a stand-in.
if docker image inspect "$official" >/dev/null 2>&1; then
  echo "$official"
  exit 0
fi
if docker image inspect "$local_tag" >/dev/null 2>&1; then
  echo "$local_tag"
  exit 0
fi
if timeout 60 docker pull -q "$official" >/dev/null 2>&1; then
  echo "$official"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
if ! command -v debootstrap >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
work="$(mktemp -d)"
trap '$SUDO rm -rf "$work"' EXIT
mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
echo "container: building $local_tag (debootstrap bookworm from ${mirror:-http://deb.debian.org/debian}, about 2 minutes)" >&2
$SUDO debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "${mirror:-http://deb.debian.org/debian}" >/dev/null
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  $SUDO cp /usr/local/share/ca-certificates/*.crt "$work/rootfs/usr/local/share/ca-certificates/"
  $SUDO chroot "$work/rootfs" update-ca-certificates >/dev/null
fi
$SUDO rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
$SUDO tar -C "$work/rootfs" -c . | docker import - daguerre-local/debian:bookworm-minbase >/dev/null

# Node and npm as the official image lays them out (/usr/local/bin, /usr/local/lib/node_modules/npm).
node_bin="$(bash scripts/node-line.sh 24)"
mkdir -p "$work/context"
cp "$node_bin" "$work/context/node"
cp -r "$(dirname "$(dirname "$node_bin")")/include" "$work/context/include"
(cd "$work/context" && npm pack --silent npm@11 >/dev/null && mkdir npm && tar -xzf npm-*.tgz -C npm --strip-components=1 && rm npm-*.tgz)
cat >"$work/context/Dockerfile" <<'DOCKERFILE'
FROM daguerre-local/debian:bookworm-minbase
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY include /usr/local/include
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
# Node reads its own certificate store, not Debian's: the machine's authorities reach npm this way.
# node-gyp would download Node's headers from nodejs.org; they are in /usr/local/include.
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm_config_nodedir=/usr/local
CMD ["node"]
DOCKERFILE
DOCKER_BUILDKIT=0 docker build -q -t "$local_tag" "$work/context" >/dev/null
echo "$local_tag"
