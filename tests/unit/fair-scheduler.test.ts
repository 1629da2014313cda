import { describe, expect, it } from 'vitest';
import { FairScheduler } from '../../server/src/capture/pool/fair-scheduler.js';
import { ApiError } from '../../server/src/errors.js';
import { captureFailure } from '../../server/src/services/capture-failures.js';
import { queueDepthBuckets } from '../../server/src/ops/metrics.js';
import { CaptureTimeoutError, ClientGoneError } from '../../server/src/capture/capture-error.js';

/** A task that runs until released, like a hostile page until its deadline. */
function blocker() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { task: () => done, release };
}

/** A task that runs until released or preempted (its signal aborted), and says which happened. */
function abortable() {
  let release!: () => void;
  let preempted = 0;
  let running = false;
  const released = new Promise<void>((resolve) => (release = resolve));
  const task = (signal: AbortSignal) =>
    new Promise<string>((resolve, reject) => {
      running = true;
      const onAbort = () => {
        running = false;
        preempted += 1;
        reject(new ClientGoneError());
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      void released.then(() => {
        signal.removeEventListener('abort', onAbort);
        running = false;
        resolve('done');
      });
    });
  return { task, release, preempted: () => preempted, running: () => running };
}

const preemptions = (tasks: Array<ReturnType<typeof abortable>>) => tasks.reduce((sum, b) => sum + b.preempted(), 0);

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

const far = () => ({ deadline: Date.now() + 60_000, signal: new AbortController().signal });

describe('fair share of capture slots between organizations', () => {
  it('is work-conserving: an organization alone uses every slot, and gives back the extra ones when another arrives', async () => {
    const scheduler = new FairScheduler({ concurrency: 3, maxQueue: 20, maxOrgShare: 0.5 });
    let starts = 0;
    const hostile = Array.from({ length: 5 }, () => abortable());
    const hostileRuns = hostile.map((b) =>
      scheduler.run('hostile', far(), (signal) => ((starts += 1), b.task(signal))).catch((e: unknown) => e),
    );
    await tick();
    // Alone, nothing is held back: all three slots run hostile captures.
    expect(scheduler.snapshot()).toMatchObject({ running: 3, waiting: 2, organizationsOverShare: 1 });
    // An honest organization arrives: the newest hostile capture above the share (1 slot) is preempted.
    let served = false;
    await scheduler.run('honest', far(), async () => void (served = true));
    expect(served).toBe(true);
    expect(preemptions(hostile)).toBe(1);
    await tick();
    // The preempted capture went back to the front of its queue and runs again, no one else waiting.
    expect(scheduler.snapshot()).toMatchObject({ running: 3, waiting: 2 });
    expect(starts).toBe(4);
    // While two honest captures wait, the hostile organization is brought down to its share.
    const honestBlock = blocker();
    const honestRuns = [scheduler.run('honest', far(), honestBlock.task), scheduler.run('honest', far(), honestBlock.task)];
    await tick();
    expect(scheduler.snapshot()).toMatchObject({ running: 3, organizationsOverShare: 1 });
    expect(preemptions(hostile)).toBe(2);
    honestBlock.release();
    await Promise.all(honestRuns);
    for (const b of hostile) b.release();
    const outcomes = await Promise.all(hostileRuns);
    // Preemption is invisible to the caller: every hostile capture ran to its end.
    expect(outcomes).toEqual(hostile.map(() => 'done'));
    expect(scheduler.snapshot()).toMatchObject({
      running: 0,
      waiting: 0,
      waitingOrganizations: 0,
      longestOrganizationQueue: 0,
      organizationsOverShare: 0,
    });
  });

  it('never preempts a capture within its share, and a preempted one still ends by its deadline', async () => {
    const scheduler = new FairScheduler({ concurrency: 2, maxQueue: 20, maxOrgShare: 0.5 });
    const within = abortable();
    const above = abortable();
    const withinRun = scheduler.run('hostile', far(), within.task);
    const aboveRun = scheduler
      .run('hostile', { deadline: Date.now() + 200, signal: new AbortController().signal }, above.task)
      .catch((e: unknown) => e);
    await tick();
    const honest = blocker();
    const honestRun = scheduler.run('honest', far(), honest.task);
    await tick();
    expect(within.preempted()).toBe(0);
    expect(above.preempted()).toBe(1);
    // Back in its queue behind a full pool, the preempted capture times out as any waiting capture does.
    expect(await aboveRun).toBeInstanceOf(CaptureTimeoutError);
    within.release();
    honest.release();
    expect(await withinRun).toBe('done');
    await honestRun;
  });

  it('holds each organization to its own plan share while others wait', async () => {
    const scheduler = new FairScheduler({ concurrency: 4, maxQueue: 20, maxOrgShare: 0.5 });
    const small = Array.from({ length: 4 }, () => abortable());
    const large = Array.from({ length: 4 }, () => abortable());
    const runs = [
      ...small.map((b) => scheduler.run('small', { ...far(), share: { maxSharePercent: 25, weight: 1 } }, b.task)),
      ...large.map((b) => scheduler.run('large', { ...far(), share: { maxSharePercent: 75, weight: 1 } }, b.task)),
    ];
    await tick();
    expect(scheduler.limitOf('small')).toBe(1);
    expect(scheduler.limitOf('large')).toBe(3);
    // small took all four slots alone; large arrived below its share of three and preempted three of them.
    expect(small.filter((b) => b.running()).length).toBe(1);
    expect(large.filter((b) => b.running()).length).toBe(3);
    for (const b of [...small, ...large]) b.release();
    await Promise.all(runs);
    // Without a plan share the default (MAX_ORG_SHARE_PERCENT) applies again.
    expect(scheduler.limitOf('small')).toBe(2);
  });

  it('weights the round-robin: an organization of weight 2 gets two turns per round', async () => {
    const scheduler = new FairScheduler({ concurrency: 1, maxQueue: 20, maxOrgShare: 1 });
    const first = blocker();
    const running = scheduler.run('x', far(), first.task);
    const order: string[] = [];
    const heavy = { ...far(), share: { maxSharePercent: null, weight: 2 } };
    const runs = [
      ...['a', 'a', 'a', 'a'].map((org) => scheduler.run(org, heavy, async () => void order.push(org))),
      ...['b', 'b', 'b'].map((org) => scheduler.run(org, far(), async () => void order.push(org))),
    ];
    first.release();
    await Promise.all([running, ...runs]);
    expect(order).toEqual(['a', 'a', 'b', 'a', 'a', 'b', 'b']);
  });

  it('serves waiting organizations round-robin, not first-come; one that had no turn yet goes before one that just had its turn', async () => {
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
    // a held the slot when b started waiting: b's turn comes first.
    expect(order).toEqual(['b', 'a', 'b', 'a', 'a']);
  });

  it('gives the next free slot to a third organization, not to one of two that flood both slots', async () => {
    const scheduler = new FairScheduler({ concurrency: 2, maxQueue: 20, maxOrgShare: 0.5 });
    const holds = { a: blocker(), b: blocker() };
    const started: string[] = [];
    const flood = (org: 'a' | 'b') => scheduler.run(org, far(), async () => (started.push(org), holds[org].task()));
    // Each flooding organization holds one slot (its share) and has two more waiting.
    const runs = [flood('a'), flood('b'), flood('a'), flood('b'), flood('a'), flood('b')];
    await tick();
    expect(started).toEqual(['a', 'b']);
    const thirdRun = scheduler.run('c', far(), async () => void started.push('c'));
    await tick();
    expect(scheduler.snapshot()).toMatchObject({ running: 2, waitingOrganizations: 3 });
    // a's first capture ends (its hung page was ended): the slot goes to c, not to a's next capture.
    holds.a.release();
    await thirdRun;
    expect(started.slice(0, 3)).toEqual(['a', 'b', 'c']);
    holds.b.release();
    await Promise.all(runs);
    expect(started.slice(3).sort()).toEqual(['a', 'a', 'b', 'b']);
  });

  it('refuses with 503 and Retry-After when the total queue is full', async () => {
    const scheduler = new FairScheduler({ concurrency: 1, maxQueue: 1, maxOrgShare: 1 });
    const b = blocker();
    const running = scheduler.run('a', far(), b.task);
    const queued = scheduler.run('b', far(), async () => 'ok');
    // The scheduler refuses in the capture's words; the answer is the service's (capture-failures.ts).
    const refused = await scheduler.run('c', far(), async () => 'no').catch((error: unknown) => captureFailure(error, 0));
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
    const late = scheduler
      .run('b', { deadline: Date.now() + 50, signal: new AbortController().signal }, async () => 'x')
      .catch((e: unknown) => e);
    const controller = new AbortController();
    const gone = scheduler.run('c', { deadline: Date.now() + 60_000, signal: controller.signal }, async () => 'x').catch((e: unknown) => e);
    controller.abort();
    expect(await gone).toBeInstanceOf(ClientGoneError);
    expect(await late).toBeInstanceOf(CaptureTimeoutError);
    expect(scheduler.snapshot().waiting).toBe(0);
    b.release();
    await running;
  });

  it('shows per-organization queues for /metrics as counts by depth, never by organization', async () => {
    const scheduler = new FairScheduler({ concurrency: 1, maxQueue: 20, maxOrgShare: 1 });
    const b = blocker();
    const runs = [scheduler.run('a', far(), b.task)];
    for (const [org, count] of [
      ['a', 6],
      ['b', 3],
      ['c', 1],
      ['d', 2],
    ] as const) {
      for (let i = 0; i < count; i += 1) runs.push(scheduler.run(org, far(), b.task));
    }
    const snap = scheduler.snapshot();
    expect(snap.queueDepths.sort()).toEqual([1, 2, 3, 6]);
    expect(queueDepthBuckets(snap.queueDepths)).toEqual({ '1': 1, '2-4': 2, '5+': 1 });
    expect(queueDepthBuckets([])).toEqual({ '1': 0, '2-4': 0, '5+': 0 });
    expect(JSON.stringify(snap)).not.toMatch(/"[abcd]"/);
    b.release();
    await Promise.all(runs);
  });
});
