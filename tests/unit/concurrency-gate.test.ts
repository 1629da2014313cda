import { describe, expect, it } from 'vitest';
import { ConcurrencyGate, defaultConcurrentCaptures } from '../../server/src/services/concurrency-gate.js';
import { ApiError } from '../../server/src/errors.js';
import { CaptureTimeoutError, ClientGoneError } from '../../server/src/capture/capture-error.js';

const far = () => ({ deadline: Date.now() + 60_000, signal: new AbortController().signal });

describe('per-plan limit of concurrent captures', () => {
  it('refuses a synchronous capture past the plan limit with 429 CONCURRENCY_LIMIT_EXCEEDED and Retry-After; other organizations are not counted', async () => {
    const gate = new ConcurrencyGate(10);
    const first = await gate.enter({ organizationId: 'a', planLimit: 2, wait: false, ...far() });
    const second = await gate.enter({ organizationId: 'a', planLimit: 2, wait: false, ...far() });
    const refused = await gate.enter({ organizationId: 'a', planLimit: 2, wait: false, ...far() }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(429);
    expect((refused as ApiError).code).toBe('CONCURRENCY_LIMIT_EXCEEDED');
    expect((refused as ApiError).message).toMatch(/allows 2 at once/);
    expect((refused as ApiError).options.retryAfterSeconds).toBeGreaterThan(0);
    // Another organization has its own count (the default limit here).
    const other = await gate.enter({ organizationId: 'b', wait: false, ...far() });
    first();
    // Leaving twice frees one place only.
    first();
    const third = await gate.enter({ organizationId: 'a', planLimit: 2, wait: false, ...far() });
    expect(gate.activeOf('a')).toBe(2);
    expect(
      await gate.enter({ organizationId: 'a', planLimit: 2, wait: false, ...far() }).catch((error: unknown) => (error as ApiError).code),
    ).toBe('CONCURRENCY_LIMIT_EXCEEDED');
    for (const leave of [second, third, other]) leave();
    expect(gate.activeOf('a')).toBe(0);
  });

  it('lets async jobs wait for a place in order, and gives up at the deadline or when the caller leaves', async () => {
    const gate = new ConcurrencyGate(1);
    const holding = await gate.enter({ organizationId: 'a', wait: true, ...far() });
    const order: number[] = [];
    const waiters = [1, 2].map((n) => gate.enter({ organizationId: 'a', wait: true, ...far() }).then((leave) => (order.push(n), leave)));
    const late = await gate
      .enter({ organizationId: 'a', wait: true, deadline: Date.now() + 30, signal: new AbortController().signal })
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(CaptureTimeoutError);
    const controller = new AbortController();
    const gone = gate
      .enter({ organizationId: 'a', wait: true, deadline: Date.now() + 60_000, signal: controller.signal })
      .catch((e: unknown) => e);
    controller.abort();
    expect(await gone).toBeInstanceOf(ClientGoneError);
    holding();
    const firstLeave = await waiters[0]!;
    expect(order).toEqual([1]);
    firstLeave();
    (await waiters[1]!)();
    expect(order).toEqual([1, 2]);
    expect(gate.activeOf('a')).toBe(0);
  });

  it('defaults to ORG_MAX_CONCURRENT_CAPTURES, or with 0 to what one instance holds (MAX_CONCURRENCY + MAX_QUEUE)', () => {
    expect(defaultConcurrentCaptures({ ORG_MAX_CONCURRENT_CAPTURES: 3, MAX_CONCURRENCY: 2, MAX_QUEUE: 32 })).toBe(3);
    expect(defaultConcurrentCaptures({ ORG_MAX_CONCURRENT_CAPTURES: 0, MAX_CONCURRENCY: 2, MAX_QUEUE: 32 })).toBe(34);
    expect(new ConcurrencyGate(7).limitOf(null)).toBe(7);
    expect(new ConcurrencyGate(7).limitOf(2)).toBe(2);
  });
});
