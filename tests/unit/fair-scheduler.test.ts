import { describe, expect, it } from 'vitest';
import { FairScheduler } from '../../server/src/capture/fair-scheduler.js';
import { ApiError } from '../../server/src/errors.js';
import { CaptureTimeoutError, ClientGoneError } from '../../server/src/capture/renderer.js';

/** A task that runs until released, like a hostile page until its deadline. */
function blocker() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { task: () => done, release };
}

const far = () => ({ deadline: Date.now() + 60_000, signal: new AbortController().signal });

describe('fair share of capture slots between organizations (issue #15)', () => {
  it('keeps a slot for an honest organization while a hostile one floods the pool', async () => {
    const scheduler = new FairScheduler({ concurrency: 3, maxQueue: 20, maxOrgShare: 0.5 });
    const hostile = Array.from({ length: 6 }, () => blocker());
    const hostileRuns = hostile.map((b) => scheduler.run('hostile', far(), b.task));
    await Promise.resolve();
    // Alone, the hostile organization may use spare slots but always leaves one free.
    expect(scheduler.snapshot().running).toBe(2);
    let served = false;
    await scheduler.run('honest', far(), async () => void (served = true));
    expect(served).toBe(true);
    const snap = scheduler.snapshot();
    expect(snap.waitingOrganizations).toBe(1);
    expect(snap.longestOrganizationQueue).toBe(4);
    // While the honest organization waits, the hostile one gets no slot beyond its share.
    const honestBlock = blocker();
    const honestRuns = [scheduler.run('honest', far(), honestBlock.task), scheduler.run('honest', far(), honestBlock.task)];
    hostile[0]!.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Both organizations are at their share: the freed slot stays spare for a newcomer, not the hostile queue.
    expect(scheduler.snapshot().running).toBe(2);
    expect(scheduler.snapshot().longestOrganizationQueue).toBe(4);
    let third = false;
    await scheduler.run('third', far(), async () => void (third = true));
    expect(third).toBe(true);
    honestBlock.release();
    await Promise.all(honestRuns);
    for (const b of hostile) b.release();
    await Promise.all(hostileRuns);
    expect(scheduler.snapshot()).toEqual({ running: 0, waiting: 0, waitingOrganizations: 0, longestOrganizationQueue: 0 });
  });

  it('serves waiting organizations round-robin, not first-come', async () => {
    const scheduler = new FairScheduler({ concurrency: 1, maxQueue: 20, maxOrgShare: 1 });
    const first = blocker();
    const running = scheduler.run('a', far(), first.task);
    const order: string[] = [];
    const runs = [
      ...['a', 'a', 'a'].map((org) => scheduler.run(org, far(), async () => void order.push(org))),
      ...['b', 'b'].map((org) => scheduler.run(org, far(), async () => void order.push(org))),
    ];
    first.release();
    await Promise.all([running, ...runs]);
    expect(order).toEqual(['a', 'b', 'a', 'b', 'a']);
  });

  it('refuses with 503 and Retry-After when the total queue is full', async () => {
    const scheduler = new FairScheduler({ concurrency: 1, maxQueue: 1, maxOrgShare: 1 });
    const b = blocker();
    const running = scheduler.run('a', far(), b.task);
    const queued = scheduler.run('b', far(), async () => 'ok');
    const refused = await scheduler.run('c', far(), async () => 'no').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(503);
    expect((refused as ApiError).options.retryAfterSeconds).toBeGreaterThan(0);
    b.release();
    await running;
    expect(await queued).toBe('ok');
  });

  it('drops a waiter whose deadline passes or whose client leaves', async () => {
    const scheduler = new FairScheduler({ concurrency: 1, maxQueue: 5, maxOrgShare: 1 });
    const b = blocker();
    const running = scheduler.run('a', far(), b.task);
    const late = scheduler.run('b', { deadline: Date.now() + 50, signal: new AbortController().signal }, async () => 'x').catch((e: unknown) => e);
    const controller = new AbortController();
    const gone = scheduler.run('c', { deadline: Date.now() + 60_000, signal: controller.signal }, async () => 'x').catch((e: unknown) => e);
    controller.abort();
    expect(await gone).toBeInstanceOf(ClientGoneError);
    expect(await late).toBeInstanceOf(CaptureTimeoutError);
    expect(scheduler.snapshot().waiting).toBe(0);
    b.release();
    await running;
  });
});
