import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { descendantsOf } from '../helpers/process-tree.js';
import { testBrowserManager } from '../helpers/test-browser.js';

/**
 * The child's Chromium: the browser process, whose command line names its profile folder, and all
 * its descendants (the headless shell's helpers carry no --user-data-dir of their own).
 */
function chromiumProcesses(launcher: number, profile: string): number[] {
  const browser = descendantsOf(launcher).find((p) => p.cmdline.includes(profile));
  return browser ? [browser.pid, ...descendantsOf(browser.pid).map((p) => p.pid)] : [];
}

/** Which of these pids are still alive (zombies count as gone). */
function stillAlive(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
    } catch {
      return false;
    }
  });
}

describe('Chromium cannot outlive the service', () => {
  it('SIGKILL of the process that launched Chromium leaves none of its Chromium processes alive, and the next start removes its profile', async () => {
    // A temp root of its own: a service started meanwhile by another test file sweeps dead
    // instances' profiles from the shared temp folder, and could remove this one before we look.
    // Short: Chromium's singleton socket lives below the profile, within the 108-byte socket path limit.
    const root = mkdtempSync(join(tmpdir(), 'rsd-'));
    chmodSync(root, 0o755);
    const child = spawn('npx', ['tsx', 'tests/fixtures/launch-browser-child.ts'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, TMPDIR: root },
    });
    const profile = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /READY (\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once('exit', () => reject(new Error(`child exited early: ${out}`)));
    });
    expect(profile.startsWith(join(root, 'daguerre-chromium-'))).toBe(true);
    const chromium = chromiumProcesses(child.pid!, profile);
    expect(chromium.length).toBeGreaterThan(2);
    // npx runs node as its child; kill the node process that owns Chromium, by pid.
    const nodePids = descendantsOf(child.pid!)
      .filter((p) => p.cmdline.includes('launch-browser-child.ts') && !p.cmdline.includes('npx'))
      .map((p) => p.pid);
    expect(nodePids.length).toBeGreaterThan(0);
    for (const pid of nodePids) process.kill(pid, 'SIGKILL');
    let alive = stillAlive(chromium);
    for (let i = 0; i < 50 && alive.length > 0; i += 1) {
      await sleep(200);
      alive = stillAlive(chromium);
    }
    child.kill('SIGKILL');
    expect(alive).toEqual([]);

    // The killed process could not remove its profile; the next start of a service does.
    expect(existsSync(profile)).toBe(true);
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = root;
    const next = testBrowserManager();
    try {
      const browser = await next.get();
      expect(existsSync(profile)).toBe(false);
      // Its own profile is left alone.
      const ownProfile = (browser.process()?.spawnargs ?? [])
        .find((a) => a.startsWith('--user-data-dir='))
        ?.slice('--user-data-dir='.length);
      expect(ownProfile && existsSync(ownProfile)).toBe(true);
    } finally {
      await next.close();
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
      rmSync(root, { recursive: true, force: true });
    }
  }, 90_000);
});
