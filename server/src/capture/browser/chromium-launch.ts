import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageFile } from '../../package-files.js';
import { FULL_CHROMIUM, HEADLESS_SHELL, isHeadlessShell } from '../../chromium-binaries.js';
import { ownerTag, removeDeadOwnersProfiles } from './profile-owner.js';

/** The unprivileged system user Chromium runs as when the service runs as root (scripts/setup.sh). */
export const CHROMIUM_USER = 'daguerre-chromium';

/** Wrapper that drops privileges, empties the environment and sets a parent-death signal. */
export const CHROMIUM_WRAPPER = packageFile('bin', 'chromium-sandboxed.sh');

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
    // DevTools over fds 3 and 4 (--remote-debugging-pipe) instead of a TCP port (docs/containment.md): a port
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
