import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM_USER } from './chromium-launch.js';

/**
 * Chromium's Linux sandbox (docs/security.md) puts every renderer in new user, PID and network
 * namespaces (Debian ships no setuid helper), so it needs unprivileged user namespaces. Where the
 * kernel forbids them Chromium cannot start sandboxed: the service refuses to start and names the
 * setting, unless the operator opts out with ALLOW_UNSANDBOXED_CHROMIUM=true.
 */

/** What the service runs Chromium with, for the start-up log and `/ready`. */
export interface SandboxStatus {
  /** `on`: Chromium's namespace and seccomp-bpf sandbox; `off`: --no-sandbox by the operator's choice. */
  mode: 'on' | 'off';
  /** Why it is off: the setting and what the kernel said. */
  reason?: string;
}

/** Kernel settings that forbid unprivileged user namespaces, with the value that forbids them. */
const FORBIDDING_SETTINGS: Array<{ path: string; name: string; forbids: (value: string) => boolean }> = [
  // Debian and Ubuntu kernels' own switch.
  { path: 'kernel/unprivileged_userns_clone', name: 'kernel.unprivileged_userns_clone', forbids: (value) => value === '0' },
  // The upstream limit: 0 namespaces means none may be made.
  { path: 'user/max_user_namespaces', name: 'user.max_user_namespaces', forbids: (value) => value === '0' },
  // Ubuntu 23.10+: AppArmor denies them to programs without a profile that allows it.
  {
    path: 'kernel/apparmor_restrict_unprivileged_userns',
    name: 'kernel.apparmor_restrict_unprivileged_userns',
    forbids: (value) => value === '1',
  },
];

/** The kernel settings (read under `procSys`, normally /proc/sys) that forbid user namespaces, as `name = value`. */
export function forbiddingKernelSettings(procSys = '/proc/sys'): string[] {
  const found: string[] = [];
  for (const setting of FORBIDDING_SETTINGS) {
    let value: string;
    try {
      value = readFileSync(join(procSys, setting.path), 'utf8').trim();
    } catch {
      continue; // This kernel has no such setting.
    }
    if (setting.forbids(value)) found.push(`${setting.name} = ${value}`);
  }
  return found;
}

/**
 * Makes a user namespace as the user Chromium will run as: the real test, since containers' seccomp
 * profiles can forbid them with every sysctl allowing. Returns the error, or undefined when it works.
 */
export function probeUserNamespace(): string | undefined {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot
    ? [
        'setpriv',
        [`--reuid=${CHROMIUM_USER}`, `--regid=${CHROMIUM_USER}`, '--clear-groups', 'unshare', '--user', '--map-root-user', 'true'],
      ]
    : ['unshare', ['--user', '--map-root-user', 'true']];
  const result = spawnSync(command[0] as string, command[1] as string[], {
    encoding: 'utf8',
    timeout: 5_000,
    env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' },
  });
  if (result.error) return result.error.message;
  if (result.status !== 0) return (result.stderr || `exit status ${result.status}`).trim();
  return undefined;
}

export class SandboxUnavailableError extends Error {}

/**
 * Decides how Chromium runs: sandboxed when the kernel allows user namespaces; otherwise the
 * service stops with a message naming the setting, or runs unsandboxed if the operator opted out.
 */
export function checkSandbox(options: { allowUnsandboxed: boolean; procSys?: string; probe?: () => string | undefined }): SandboxStatus {
  const settings = forbiddingKernelSettings(options.procSys);
  const probeError = settings.length === 0 ? (options.probe ?? probeUserNamespace)() : undefined;
  if (settings.length === 0 && probeError === undefined) return { mode: 'on' };
  const cause =
    settings.length > 0
      ? `the kernel forbids unprivileged user namespaces (${settings.join(', ')})`
      : `a user namespace could not be created (${probeError})`;
  if (options.allowUnsandboxed) {
    return { mode: 'off', reason: `ALLOW_UNSANDBOXED_CHROMIUM=true and ${cause}` };
  }
  const fix =
    settings.length > 0
      ? `allow them (sysctl -w ${settings
          .map((setting) => setting.replace(/ = .*/, ''))
          .map((name) => `${name}=${name === 'user.max_user_namespaces' ? '15000' : name.includes('apparmor') ? '0' : '1'}`)
          .join(' ')})`
      : 'allow them (in a container: a seccomp profile that permits unshare/clone of user namespaces)';
  throw new SandboxUnavailableError(
    `Chromium's sandbox needs unprivileged user namespaces, but ${cause}. Either ${fix}, or set ALLOW_UNSANDBOXED_CHROMIUM=true to run Chromium without its sandbox (not recommended: a renderer exploit then runs unconfined as the Chromium user).`,
  );
}

/** Chromium's flags for an unsandboxed run; none when sandboxed (never --no-sandbox otherwise: docs/security.md). */
export function sandboxFlags(status: SandboxStatus): string[] {
  return status.mode === 'off' ? ['--no-sandbox'] : [];
}
