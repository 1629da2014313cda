import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import type { Logger } from 'pino';
import { CHROMIUM_USER } from './chromium-launch.js';

const SYSTEM_PATH = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

function userExists(): boolean {
  return spawnSync('id', ['-u', CHROMIUM_USER], { env: SYSTEM_PATH }).status === 0;
}

/**
 * A service started as root runs Chromium as CHROMIUM_USER, a system user with no login and no home
 * (docs/security.md). A checkout's scripts/setup.sh creates it; an installed package has no setup
 * step, so its first start as root creates the user itself, and says so. Two instances starting at
 * once may both try: the loser finds the user there and goes on.
 */
export function ensureChromiumUser(logger: Logger): void {
  if (process.getuid?.() !== 0 || userExists()) return;
  const result = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', CHROMIUM_USER], {
    encoding: 'utf8',
    env: SYSTEM_PATH,
  });
  if (userExists()) {
    logger.info({ user: CHROMIUM_USER }, 'created the system user Chromium runs as (the service runs as root)');
    return;
  }
  const why = result.error?.message ?? (result.stderr.trim() || `exit status ${result.status}`);
  throw new Error(
    `Running as root, Chromium runs as the system user ${CHROMIUM_USER}, which does not exist and could not be created (useradd: ${why}). Create it with: useradd --system --no-create-home --shell /usr/sbin/nologin ${CHROMIUM_USER}, or run the service as an unprivileged user.`,
  );
}

/**
 * The Chromium binary CHROME_PATH names (by default Debian's headless shell or full browser). An
 * installed package brings no browser: without this check a missing one surfaced as puppeteer's
 * "Target closed".
 */
export function ensureChromiumBinary(path: string): void {
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `No Chromium at ${path}. Install Debian's (apt-get install chromium-headless-shell fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji; docs/install.md), or set CHROME_PATH to a Chromium binary.`,
    );
  }
}
