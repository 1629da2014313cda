import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkSandbox,
  forbiddingKernelSettings,
  probeUserNamespace,
  sandboxFlags,
  SandboxUnavailableError,
} from '../../server/src/capture/browser/sandbox-check.js';

/** A /proc/sys lookalike holding the given settings, for kernels this machine does not have. */
function procSys(settings: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'daguerre-procsys-'));
  for (const [path, value] of Object.entries(settings)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), `${value}\n`);
  }
  made.push(root);
  return root;
}
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the start-up check of Chromium sandbox', () => {
  it('finds user namespaces allowed on this machine, by its kernel settings and by making one as the Chromium user', () => {
    expect(forbiddingKernelSettings()).toEqual([]);
    expect(probeUserNamespace()).toBeUndefined();
    const status = checkSandbox({ allowUnsandboxed: false });
    expect(status).toEqual({ mode: 'on' });
    expect(sandboxFlags(status)).toEqual([]);
  });

  it('refuses to start where the kernel forbids them, naming the setting and the opt-out', () => {
    const forbidding = procSys({ 'kernel/unprivileged_userns_clone': '0', 'user/max_user_namespaces': '63000' });
    expect(() => checkSandbox({ allowUnsandboxed: false, procSys: forbidding })).toThrow(SandboxUnavailableError);
    expect(() => checkSandbox({ allowUnsandboxed: false, procSys: forbidding })).toThrow(
      /kernel\.unprivileged_userns_clone = 0.*sysctl -w kernel\.unprivileged_userns_clone=1.*ALLOW_UNSANDBOXED_CHROMIUM=true/,
    );
    const noNamespaces = procSys({ 'user/max_user_namespaces': '0' });
    expect(() => checkSandbox({ allowUnsandboxed: false, procSys: noNamespaces })).toThrow(/user\.max_user_namespaces = 0/);
    const apparmor = procSys({ 'kernel/apparmor_restrict_unprivileged_userns': '1' });
    expect(() => checkSandbox({ allowUnsandboxed: false, procSys: apparmor })).toThrow(/apparmor_restrict_unprivileged_userns = 1/);
  });

  it('refuses when making a namespace fails with every setting allowing it (a container seccomp profile)', () => {
    const allowing = procSys({ 'kernel/unprivileged_userns_clone': '1' });
    expect(() =>
      checkSandbox({ allowUnsandboxed: false, procSys: allowing, probe: () => 'unshare: unshare failed: Operation not permitted' }),
    ).toThrow(/could not be created \(unshare: unshare failed: Operation not permitted\).*seccomp/);
  });

  it('runs unsandboxed only with the explicit opt-out, and says why', () => {
    const forbidding = procSys({ 'kernel/unprivileged_userns_clone': '0' });
    const status = checkSandbox({ allowUnsandboxed: true, procSys: forbidding });
    expect(status.mode).toBe('off');
    expect(status.reason).toMatch(
      /ALLOW_UNSANDBOXED_CHROMIUM=true and the kernel forbids unprivileged user namespaces \(kernel\.unprivileged_userns_clone = 0\)/,
    );
    expect(sandboxFlags(status)).toEqual(['--no-sandbox']);
    // Where the sandbox works the opt-out changes nothing.
    expect(checkSandbox({ allowUnsandboxed: true })).toEqual({ mode: 'on' });
  });
});
