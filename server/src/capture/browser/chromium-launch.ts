import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageFile } from '../../package-files.js';
import { ownerTag, removeDeadOwnersProfiles } from './profile-owner.js';

/** The unprivileged system user Chromium runs as when the service runs as root (scripts/setup.sh). */
export const CHROMIUM_USER = 'daguerre-chromium';

/** Wrapper that drops privileges, empties the environment and sets a parent-death signal. */
export const CHROMIUM_WRAPPER = packageFile('bin', 'chromium-sandboxed.sh');

/** Debian's full browser (package chromium): what a raw puppeteer script drives, and the fallback. */
export const FULL_CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's chromium-headless-shell: the same Chromium release's Blink, V8 and Skia without the
 * desktop browser around them. Chromium 156's `--headless=new` is the full browser with a window,
 * toolbar and tab strip that nobody sees, and every navigation lays out and paints them in the
 * browser process. A trace showed about 20–30 ms of browser main-thread time per navigation in
 * View::Layout/View::Paint and toolbar updates, and a capture here is two navigations (the page,
 * then the isolation reset's about:blank, pool-slot.ts). Measured on the bench page, a capture
 * plus its reset: 139 → 82 ms of browser-process CPU, 264 → 227 ms wall (README, "Performance").
 */
export const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';

/** The Chromium the service runs when CHROME_PATH is not set: the headless shell when installed (scripts/setup.sh installs it). */
export function defaultChromiumPath(): string {
  return existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : FULL_CHROMIUM;
}

/** Whether a binary is a headless shell, which takes `--headless` (puppeteer's headless: 'shell') rather than `--headless=new`. */
export function isHeadlessShell(executablePath: string): boolean {
  return /headless[-_]shell$/.test(executablePath);
}

/**
 * Debian's /usr/bin/chromium and /usr/bin/chromium-headless-shell are shell scripts that run the
 * binary as their child: the wrapper must exec the binary itself, or its parent-death signal would
 * reach the script only and Chromium would outlive a killed service.
 */
const SCRIPT_TO_BINARY: Record<string, string> = {
  [FULL_CHROMIUM]: '/usr/lib/chromium/chromium',
  '/usr/bin/chromium-headless-shell': HEADLESS_SHELL,
};
function realBinary(executablePath: string): string {
  return SCRIPT_TO_BINARY[executablePath] ?? executablePath;
}

/** Prefix of the service's Chromium profile folders in the temp directory. */
export const SERVICE_PROFILE_PREFIX = 'daguerre-chromium-';

/**
 * A fresh profile folder (mode 700) owned by the user Chromium will run as, so that only Chromium
 * and root can read it. Its name carries this process's identity (profile-owner.ts), so a later
 * start can tell it was left behind by a process that died.
 */
export function makeChromiumProfile(prefix = SERVICE_PROFILE_PREFIX): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}${ownerTag()}`));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', CHROMIUM_USER]).toString().trim());
    const gid = Number(execFileSync('id', ['-g', CHROMIUM_USER]).toString().trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

/**
 * Launch options shared by the service, the bench baselines and browser tests: Chromium through
 * the sandboxing wrapper, with an environment of the wrapper's own settings only, in the headless
 * mode its binary takes, spoken to over a pipe.
 */
export function sandboxedLaunchOptions(executablePath: string, userDataDir: string) {
  return {
    executablePath: CHROMIUM_WRAPPER,
    headless: isHeadlessShell(executablePath) ? ('shell' as const) : true,
    userDataDir,
    // DevTools over fds 3 and 4 (--remote-debugging-pipe) instead of a TCP port (issue #28): a port
    // on loopback let any local user list and drive every organization's pages; a pipe reaches only
    // the process that started Chromium (the wrapper's exec chain keeps the two fds open).
    pipe: true,
    env: {
      DAGUERRE_CHROMIUM_BIN: realBinary(executablePath),
      DAGUERRE_CHROMIUM_USER: CHROMIUM_USER,
      DAGUERRE_CHROMIUM_HOME: userDataDir,
    },
  };
}

/** Removes the service profile folders of processes that died without removing them (SIGKILL). */
export function removeDeadInstancesProfiles(): string[] {
  return removeDeadOwnersProfiles(tmpdir(), SERVICE_PROFILE_PREFIX);
}
