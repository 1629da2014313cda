#!/usr/bin/env bash
# Installs what a fresh Debian machine with Node 20 lacks: Chromium and fonts (apt), npm dependencies.
# Idempotent and quiet when everything is already there. Used by `npm start`, `npm test` and .ci/run
# (the image installs its own way: deploy/Dockerfile).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

# Chromium: the headless shell renders for the service, the full browser drives the browser tests
# (Swagger UI, dashboard) and is the bench's raw floor; fonts for Latin, CJK and emoji text; poppler-utils (pdftotext, pdftoppm) for the pdf tests.
# ffmpeg encodes the scrolling videos (formats mp4, webm, gif).
APT_PACKAGES=(chromium chromium-headless-shell fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji poppler-utils ffmpeg)
# Tests only: python3-seccomp loads deploy/kubernetes/seccomp's profile around a real Chromium.
APT_PACKAGES+=(python3-seccomp)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]} (apt)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Puppeteer must not download a browser (no internet here); it drives Debian's Chromium packages.
export PUPPETEER_SKIP_DOWNLOAD=true
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies"
  # npm 11 can write a lock without other platforms' optional packages, which `npm ci` then
  # rejects; `npm install` installs the locked versions all the same.
  npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --no-audit --no-fund --loglevel=error
fi

# The dashboard's script, bundled from its TypeScript sources (docs/development.md).
node server/scripts/build-dashboard.mjs

# Chromium runs as this unprivileged system user when the service runs as root (docs/security.md).
if [ "$(id -u)" = "0" ] && ! id daguerre-chromium >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin daguerre-chromium
fi
