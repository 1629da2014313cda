import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CHROMIUM_USER } from '../../server/src/capture/browser/chromium-launch.js';
import { HEADLESS_SHELL } from '../../server/src/chromium-binaries.js';

/**
 * The Localhost seccomp profile of deploy/kubernetes (docs/deploy.md) around a real Chromium: run
 * as an unprivileged user with no_new_privs under the shipped profile, Chromium starts WITH its
 * sandbox and renders; under RuntimeDefault's rule for a container without CAP_SYS_ADMIN (clone
 * without namespace flags, no unshare, no chroot) it refuses to start ("No usable sandbox"). That
 * is why the pods need it.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PROFILE = join(ROOT, 'deploy/kubernetes/seccomp/daguerre-chromium.json');
const LOADER = join(ROOT, 'tests/helpers/seccomp-exec.py');
/** moby's RuntimeDefault rule for clone without CAP_SYS_ADMIN: no CLONE_NEW* flags (0x7E020000). */
const RUNTIME_DEFAULT_CLONE = {
  names: ['clone'],
  action: 'SCMP_ACT_ALLOW',
  args: [{ index: 0, value: 2_114_060_288, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
};

interface Profile {
  syscalls: { names: string[]; action: string; args?: unknown[] }[];
}

const work = mkdtempSync(join(tmpdir(), 'daguerre-seccomp-'));
// Chromium's user (scripts/setup.sh creates it) writes its profile and the screenshot here.
chownSync(work, Number(execFileSync('id', ['-u', CHROMIUM_USER], { encoding: 'utf8' }).trim()), 0);

/** Renders a tiny page with the headless shell, sandboxed (no --no-sandbox), under `profilePath`. */
function render(profilePath: string, name: string): Promise<{ code: number | null; output: string; shot: string }> {
  const shot = join(work, `${name}.png`);
  const args = [
    LOADER,
    profilePath,
    CHROMIUM_USER,
    HEADLESS_SHELL,
    '--headless',
    '--disable-gpu',
    '--no-first-run',
    '--disable-crash-reporter',
    `--user-data-dir=${join(work, `profile-${name}`)}`,
    `--screenshot=${shot}`,
    '--window-size=320,200',
    'data:text/html,<h1>sandboxed</h1>',
  ];
  return new Promise((resolve) => {
    execFile('/usr/bin/python3', args, { timeout: 60_000, env: { PATH: process.env.PATH, HOME: work } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout + stderr, shot });
    });
  });
}

describe('the Localhost seccomp profile for Chromium (deploy/kubernetes/seccomp)', () => {
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('lets Chromium start with its sandbox as an unprivileged user, where RuntimeDefault does not', async () => {
    const shipped = await render(PROFILE, 'shipped');
    expect(shipped.code, shipped.output).toBe(0);
    expect(readFileSync(shipped.shot).subarray(1, 4).toString()).toBe('PNG');
    expect(shipped.output).not.toMatch(/No usable sandbox/);

    const profile = JSON.parse(readFileSync(PROFILE, 'utf8')) as Profile;
    const withoutAdditions = profile.syscalls
      .map((rule) => ({ ...rule, names: rule.names.filter((n) => !['clone', 'unshare', 'chroot'].includes(n)) }))
      .filter((rule) => rule.names.length > 0);
    const runtimeDefault = join(work, 'runtime-default.json');
    writeFileSync(runtimeDefault, JSON.stringify({ ...profile, syscalls: [...withoutAdditions, RUNTIME_DEFAULT_CLONE] }));
    const refused = await render(runtimeDefault, 'runtime-default');
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/No usable sandbox/);
    expect(existsSync(refused.shot)).toBe(false);
  });
});
