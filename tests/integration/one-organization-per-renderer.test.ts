import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { BrowserManager } from '../../server/src/capture/browser-manager.js';
import { ContextPool } from '../../server/src/capture/context-pool.js';

describe('one organization per renderer', () => {
  const logger = pino({ level: 'silent' });
  const manager = new BrowserManager({ executablePath: '/usr/bin/chromium', recycleAfter: 100, protocolTimeoutMs: 20_000, logger });
  const pool = new ContextPool(manager, { size: 1, maxQueue: 4, reuseLimit: 50, logger });
  afterAll(async () => {
    await pool.close();
    await manager.close();
  });

  it('reuses a warm context for the same organization and never hands it to another one', async () => {
    const first = await pool.acquire('org-a');
    await first.page.setContent('<p>a</p>');
    const contextA = first.context;
    await pool.release(first);

    const again = await pool.acquire('org-a');
    expect(again.context).toBe(contextA);
    await pool.release(again);

    const other = await pool.acquire('org-b');
    expect(other.context).not.toBe(contextA);
    expect(other.organizationId).toBe('org-b');
    await other.page.setContent('<p>b</p>');
    await pool.release(other);

    const back = await pool.acquire('org-a');
    expect(back.context).not.toBe(other.context);
    await pool.release(back);
  }, 90_000);
});
