import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextPool } from '../../server/src/capture/pool/context-pool.js';
import { PoolSaturatedError } from '../../server/src/capture/pool/capture-turns.js';
import { testBrowserManager } from '../helpers/test-browser.js';

/** The pool's own queue: bounded, first come first served, and a capture that gives up loses only its own place. */
describe('context pool queue', () => {
  const logger = pino({ level: 'silent' });
  const manager = testBrowserManager(logger);
  const pool = new ContextPool(manager, { size: 1, maxQueue: 2, reuseLimit: 50, logger });
  afterAll(async () => {
    await pool.close();
    await manager.close();
  });

  it('refuses past maxQueue, and a capture abandoned just after its turn came keeps the one behind it queued', async () => {
    await pool.warm();
    const first = await pool.acquire('org-a');
    const second = pool.acquire('org-a');
    const third = pool.acquire('org-b');
    expect(pool.waiting).toBe(2);
    await expect(pool.acquire('org-c')).rejects.toBeInstanceOf(PoolSaturatedError);

    // The second's turn comes; it gives up before its context is handed over.
    await pool.release(first);
    pool.abandon(second);
    expect(pool.waiting).toBe(1);
    // Its context goes straight back, and the third gets the turn.
    const slot = await third;
    expect(slot.organizationId).toBe('org-b');
    expect(pool.busy).toBe(1);
    await pool.release(slot);
    expect(pool.busy).toBe(0);
    expect(pool.waiting).toBe(0);
  }, 60_000);

  it('takes a still-queued capture out of the queue when it gives up', async () => {
    const held = await pool.acquire('org-a');
    const queued = pool.acquire('org-a');
    expect(pool.waiting).toBe(1);
    pool.abandon(queued);
    await expect(queued).rejects.toThrow(/gave up/);
    expect(pool.waiting).toBe(0);
    await pool.release(held);
    expect(pool.busy).toBe(0);
  }, 60_000);
});
