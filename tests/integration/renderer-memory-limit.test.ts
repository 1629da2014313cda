import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCgroups } from '../../server/src/capture/browser/renderer-memory-cgroup.js';
import { RendererMemoryWatchdog } from '../../server/src/capture/browser/renderer-memory-watchdog.js';
import { decodePng, near } from '../helpers/images.js';
import { alive, descendantsOf } from '../helpers/process-tree.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { testBrowserManager } from '../helpers/test-browser.js';

const LIMIT_MB = 512;
const MB = 1024 ** 2;
/** What the peak may pass the limit by: one sampling interval of the fastest bomb (~1.7 GB/s here) and the kill. */
const MARGIN_MB = 160;

/**
 * Memory bombs that start with the document's first script (never on a timer after load) and never
 * yield, so the page never finishes loading: whatever the limit, only the watchdog ends them. Each
 * step allocates and touches a large block outside the JS heap.
 */
const ARRAY_BUFFER_BOMB = `<script>const kept=[];for(;;){const b=new ArrayBuffer(256*1024*1024);new Uint8Array(b).fill(7);kept.push(b)}</script>`;
const CANVAS_BOMB = `<script>const kept=[];for(;;){const c=document.createElement('canvas');c.width=4096;c.height=4096;const g=c.getContext('2d');g.fillStyle='red';g.fillRect(0,0,4096,4096);kept.push(c)}</script>`;
const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

/** Proportional set size of a process, from smaps_rollup (0 when it is gone). */
function pssBytes(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Samples every Chromium process of the service every 100 ms and keeps each one's largest PSS. */
function sampleTree(roots: () => number[]): { stop(): Map<number, number> } {
  const peaks = new Map<number, number>();
  const timer = setInterval(() => {
    for (const root of roots()) {
      for (const proc of descendantsOf(root)) peaks.set(proc.pid, Math.max(peaks.get(proc.pid) ?? 0, pssBytes(proc.pid)));
    }
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return peaks;
    },
  };
}

describe('a memory limit per capture that covers all of a renderer memory (RENDERER_MEMORY_LIMIT_MB)', () => {
  let service: TestService;
  let otherKey: string;

  beforeAll(async () => {
    service = await startTestService({ env: { RENDERER_MEMORY_LIMIT_MB: String(LIMIT_MB), MAX_CONCURRENCY: '2', RATE_LIMIT_MAX: '1000' } });
    const plan = await service.runtime.accounts.createPlan({ name: `other-${Date.now()}`, tier: 'test', creditsPerMonth: 100 });
    const org = await service.runtime.accounts.createOrganization('Other org', plan);
    otherKey = (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'other' })).key;
  });
  afterAll(async () => {
    await service?.stop();
  });

  const capture = (apiKey: string, html: string) =>
    service.get(`/capture?${new URLSearchParams({ html, viewportWidth: '200', viewportHeight: '150', apiKey })}`);
  const expectWorks = async (apiKey: string) => {
    const response = await capture(apiKey, OK_PAGE);
    expect(response.status).toBe(200);
    const image = decodePng(Buffer.from(await response.arrayBuffer()));
    expect(near(image.pixel(100, 75), [40, 160, 110])).toBe(true);
  };

  for (const [name, bomb] of [
    ['ArrayBuffer', ARRAY_BUFFER_BOMB],
    ['canvas', CANVAS_BOMB],
  ] as const) {
    it(`ends a renderer that allocates ${name} memory past the limit: 422 PAGE_MEMORY_LIMIT, nothing charged, another organization's capture answers meanwhile`, async () => {
      const watchdog = service.runtime.memoryWatchdog;
      // As root on these machines the kernel holds each process at the limit too (renderer-memory-cgroup.ts).
      expect(watchdog.kernelHold).toBe(process.getuid?.() === 0 && existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes'));
      const killsBefore = watchdog.killCount;
      const before = await service.client.usage();
      const sampler = sampleTree(() => service.runtime.browser.pids());
      const started = Date.now();
      const [bombed, other] = await Promise.all([
        capture(service.apiKey, bomb).then(async (response) => ({
          response,
          body: (await response.json()) as { error: { code: string; message: string } },
          at: Date.now(),
        })),
        // Another organization's capture while the bomb grows.
        capture(otherKey, OK_PAGE),
      ]);
      const peaks = sampler.stop();

      expect(other.status).toBe(200);
      await other.arrayBuffer();
      expect(bombed.response.status).toBe(422);
      expect(bombed.body.error.code).toBe('PAGE_MEMORY_LIMIT');
      expect(bombed.body.error.message).toContain(`${LIMIT_MB} MB`);
      expect(watchdog.killCount).toBe(killsBefore + 1);
      const kill = watchdog.recentKills().at(-1)!;
      expect(kill.type).toBe('renderer');
      expect(kill.claimed).toBe(true);
      // No process of the tree was seen far past the limit.
      const peak = Math.max(...peaks.values());
      expect(peak).toBeLessThan((LIMIT_MB + MARGIN_MB) * MB);
      expect(kill.usedBytes).toBeLessThan((LIMIT_MB + MARGIN_MB) * MB);
      for (let i = 0; i < 100 && alive(kill.pid); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(alive(kill.pid)).toBe(false);
      console.log(
        `${name} bomb (limit ${LIMIT_MB} MB): sampled peak ${Math.round(peak / MB)} MB, ${Math.round(kill.usedBytes / MB)} MB when ended ${kill.at - started} ms after the request, answered ${bombed.at - kill.at} ms after the kill`,
      );

      expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
      expect(await (await service.get('/metrics')).text()).toContain(`daguerre_renderer_memory_kills_total ${watchdog.killCount}`);
      // The next capture of every organization works.
      await expectWorks(service.apiKey);
      await expectWorks(otherKey);
    }, 120_000);
  }
});

/** Where the kernel cannot hold a process at the limit (no v1 memory cgroup, not root), the watchdog alone ends it. */
describe('the watchdog alone, without a memory cgroup', () => {
  const logger = pino({ level: 'silent' });
  const manager = testBrowserManager(logger);
  const watchdog = new RendererMemoryWatchdog({ limitBytes: 384 * MB, roots: () => manager.pids(), logger });
  afterAll(async () => {
    watchdog.close();
    await manager.close();
  });

  it('ends a renderer past the limit within about one sampling interval', async () => {
    expect(watchdog.kernelHold).toBe(false);
    watchdog.start();
    const browser = await manager.get();
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    const crashed = new Promise<void>((resolve) => page.once('error', () => resolve()));
    const sampler = sampleTree(() => manager.pids());
    void page.goto(`data:text/html,${encodeURIComponent(ARRAY_BUFFER_BOMB)}`).catch(() => undefined);
    await crashed;
    const peak = Math.max(...sampler.stop().values());
    const kill = watchdog.recentKills().at(-1)!;
    expect(kill.type).toBe('renderer');
    // Without the kernel's hold the bomb grows until the next sample: one interval at ~1-2 GB/s, more under load.
    expect(kill.usedBytes).toBeLessThan((384 + 256) * MB);
    expect(peak).toBeLessThan((384 + 256) * MB);
    console.log(
      `watchdog alone (limit 384 MB): sampled peak ${Math.round(peak / MB)} MB, ${Math.round(kill.usedBytes / MB)} MB when ended`,
    );
    await context.close();
  }, 60_000);
});

describe('memory cgroups of a service that died', () => {
  it('are removed by the next start, and a live one is left alone', () => {
    const own = /^\d+:memory:(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
    const available = process.getuid?.() === 0 && own !== undefined && existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes');
    if (!available) {
      expect(MemoryCgroups.open()).toBeUndefined();
      return;
    }
    const parent = join('/sys/fs/cgroup/memory', own);
    // pid 1's start time is not 1 tick: this owner is dead. A folder with a child cgroup, as a SIGKILLed service leaves it.
    const dead = join(parent, 'daguerre-1-1-1');
    mkdirSync(join(dead, 'p123'), { recursive: true });
    const cgroups = MemoryCgroups.open()!;
    try {
      expect(cgroups).toBeDefined();
      expect(existsSync(dead)).toBe(false);
      // This process's own folder (alive) is kept.
      expect(readdirSync(parent).some((name) => name.startsWith(`daguerre-${process.pid}-`))).toBe(true);
    } finally {
      cgroups.close();
    }
  });
});
