import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextPool, EXTRA_SPARES_IDLE_MS } from '../../server/src/capture/pool/context-pool.js';
import { descendantsOf } from '../helpers/process-tree.js';
import { testBrowserManager } from '../helpers/test-browser.js';

/**
 * What an idle worker keeps open in Chromium (docs/scaling.md, "Memory of an idle worker"): the
 * warm context of each organization it served and SPARE_CONTEXTS spares, each with its renderer;
 * nothing else.
 */
describe('an idle pool', () => {
  const logger = pino({ level: 'silent' });
  const manager = testBrowserManager(logger);
  const renderers = () => descendantsOf(manager.pid()!).filter((p) => p.cmdline.includes('--type=renderer')).length;
  const waitFor = async (condition: () => boolean, ms: number) => {
    for (const started = Date.now(); Date.now() - started < ms && !condition();) await new Promise((r) => setTimeout(r, 50));
    return condition();
  };
  afterAll(async () => {
    await manager.close();
  });

  it('keeps no renderer for the tab Chromium opens with', async () => {
    const browser = await manager.get();
    expect(await browser.pages()).toEqual([]);
    expect(await waitFor(() => renderers() === 0, 5_000)).toBe(true);
  }, 60_000);

  it("closes the spares warm() opened past SPARE_CONTEXTS once nothing renders, and keeps the organization's warm context", async () => {
    const pool = new ContextPool(manager, { size: 3, maxQueue: 4, reuseLimit: 50, spares: 1, warmContexts: 6, logger });
    try {
      await pool.warm();
      // A spare a render slot, for a first burst of organizations.
      expect(pool.spareCount).toBe(3);
      const first = await pool.acquire('org-a');
      await first.page.setContent('<p>a</p>');
      await pool.release(first);
      // Idle: one spare is left, beside org-a's context; two renderers in all.
      expect(await waitFor(() => pool.spareCount === 1, EXTRA_SPARES_IDLE_MS + 5_000)).toBe(true);
      expect(await waitFor(() => renderers() === 2, 5_000)).toBe(true);
      expect((await manager.get()).browserContexts()).toContain(first.context);
      // The organization comes back to its own warm context, and a new one still finds a spare ready.
      const again = await pool.acquire('org-a');
      expect(again.context).toBe(first.context);
      await pool.release(again);
      const spares = new Set((await manager.get()).browserContexts());
      const other = await pool.acquire('org-b');
      expect(spares.has(other.context)).toBe(true);
      expect(other.context).not.toBe(first.context);
      await pool.release(other);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('keeps the spares while a capture renders, and closes them once it has ended', async () => {
    const pool = new ContextPool(manager, { size: 4, maxQueue: 4, reuseLimit: 50, spares: 1, warmContexts: 6, logger });
    try {
      await pool.warm();
      const first = await pool.acquire('org-c');
      const second = await pool.acquire('org-d');
      await pool.release(second);
      // org-c's capture still renders: a burst may still come, the spares stay.
      await new Promise((r) => setTimeout(r, EXTRA_SPARES_IDLE_MS + 500));
      expect(pool.spareCount).toBe(2);
      await pool.release(first);
      expect(await waitFor(() => pool.spareCount === 1, EXTRA_SPARES_IDLE_MS + 5_000)).toBe(true);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
