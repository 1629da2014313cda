import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownerTag, removeDeadOwnersProfiles } from './profile-owner.js';

/** The unprivileged system user Chromium runs as when the service runs as root (scripts/setup.sh). */
export const CHROMIUM_USER = 'rendershot-chromium';

/** Wrapper that drops privileges, empties the environment and sets a parent-death signal. */
export const CHROMIUM_WRAPPER = resolve(dirname(fileURLToPath(import.meta.url)), '../../bin/chromium-sandboxed.sh');

/** Debian's /usr/bin/chromium is a shell script; the wrapper must exec the binary itself. */
function realBinary(executablePath: string): string {
  return executablePath === '/usr/bin/chromium' ? '/usr/lib/chromium/chromium' : executablePath;
}

/** Prefix of the service's Chromium profile folders in the temp directory. */
export const SERVICE_PROFILE_PREFIX = 'rendershot-chromium-';

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
 * the sandboxing wrapper, with an environment of the wrapper's own settings only.
 */
export function sandboxedLaunchOptions(executablePath: string, userDataDir: string) {
  return {
    executablePath: CHROMIUM_WRAPPER,
    userDataDir,
    env: {
      RENDERSHOT_CHROMIUM_BIN: realBinary(executablePath),
      RENDERSHOT_CHROMIUM_USER: CHROMIUM_USER,
      RENDERSHOT_CHROMIUM_HOME: userDataDir,
    },
  };
}

/** Removes the service profile folders of processes that died without removing them (SIGKILL). */
export function removeDeadInstancesProfiles(): string[] {
  return removeDeadOwnersProfiles(tmpdir(), SERVICE_PROFILE_PREFIX);
}
