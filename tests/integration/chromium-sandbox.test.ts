import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserManager } from '../../server/src/capture/browser/browser-manager.js';
import { testBrowserManager } from '../helpers/test-browser.js';

const SECRET = 'issue14-secret-value-should-never-reach-chromium';

function proc(pid: number, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}

/** Every live process below root, found by ppid (never by name: other Chromiums run here). */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = proc(pid, 'stat');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (stat) parents.set(pid, ppid);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const [pid, ppid] of parents)
      if (ppid === current) {
        found.push(pid);
        queue.push(pid);
      }
  }
  return found;
}

describe('Chromium runs sandboxed and unprivileged', () => {
  let manager: BrowserManager;
  let pid: number;
  beforeAll(async () => {
    process.env.DAGUERRE_TEST_SECRET = SECRET;
    manager = testBrowserManager();
    const browser = await manager.get();
    const page = await browser.newPage();
    await page.setContent('<h1>hello</h1>');
    pid = manager.pid()!;
  }, 60_000);
  afterAll(async () => {
    await manager.close();
  });

  it('no Chromium process is root or unsandboxed, renderers use seccomp, none sees the service env', () => {
    const all = [pid, ...descendants(pid)].filter((p) => proc(p, 'cmdline') !== '');
    expect(process.getuid?.()).toBe(0);
    const chromium = all.filter((p) => proc(p, 'cmdline').includes('chromium'));
    expect(chromium.length).toBeGreaterThan(2);
    const renderers = chromium.filter((p) => proc(p, 'cmdline').includes('--type=renderer'));
    expect(renderers.length).toBeGreaterThan(0);
    for (const p of chromium) {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(proc(p, 'status'))![1]);
      expect(uid).not.toBe(0);
      expect(proc(p, 'cmdline')).not.toContain('--no-sandbox');
      expect(proc(p, 'cmdline')).not.toContain('--disable-setuid-sandbox');
      expect(proc(p, 'environ')).not.toContain(SECRET);
    }
    for (const p of renderers) expect(proc(p, 'status')).toMatch(/^Seccomp:\s+2$/m);
  });
});
