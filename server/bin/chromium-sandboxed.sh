#!/bin/sh
# Puppeteer's executablePath for Chromium (issue #14). Drops to an unprivileged user when started
# as root, gives Chromium an empty environment (none of the service's secrets) and a parent-death
# signal so it dies with the service, SIGKILL included. Chromium's own sandbox stays on.
# DAGUERRE_CHROMIUM_BIN / _USER / _HOME come from browser-manager.ts; nothing else is passed on.
bin="${DAGUERRE_CHROMIUM_BIN:-/usr/lib/chromium/chromium}"
home="${DAGUERRE_CHROMIUM_HOME:-/tmp}"
if [ "$(id -u)" = "0" ]; then
  user="${DAGUERRE_CHROMIUM_USER:-daguerre-chromium}"
  exec setpriv --reuid="$user" --regid="$user" --clear-groups --pdeathsig=KILL \
    env -i HOME="$home" TMPDIR="$home" PATH=/usr/bin:/bin "$bin" --disable-crash-reporter --disable-breakpad "$@"
fi
exec setpriv --pdeathsig=KILL \
  env -i HOME="$home" TMPDIR="$home" PATH=/usr/bin:/bin "$bin" --disable-crash-reporter --disable-breakpad "$@"
