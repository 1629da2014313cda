import { describe, expect, it } from 'vitest';
import type { CaptureOptions } from '@daguerre/contract';
import { waitBudgetMs } from '../../server/src/capture/page/navigation.js';

const request = (leftMs: number) => ({ deadline: Date.now() + leftMs, signal: new AbortController().signal });
const options = (extra: Partial<CaptureOptions> = {}) =>
  ({
    delay: 0,
    fullPage: false,
    fullPageScroll: false,
    fullPageScrollDuration: 1000,
    failOnWaitTimeout: false,
    ...extra,
  }) as CaptureOptions;

/** docs/capture-fidelity.md: how long waitUntil may take before the page is captured as it is. */
describe('waitBudgetMs', () => {
  it('keeps a fifth of the time left to capture, between 1.5 and 5 s', () => {
    expect(waitBudgetMs(request(30_000), options())).toBeGreaterThan(24_900);
    expect(waitBudgetMs(request(30_000), options())).toBeLessThanOrEqual(25_000);
    expect(waitBudgetMs(request(60_000), options())).toBeLessThanOrEqual(55_000);
    expect(waitBudgetMs(request(3_000), options())).toBeLessThanOrEqual(1_500);
    expect(waitBudgetMs(request(3_000), options())).toBeGreaterThan(1_400);
  });

  it('also keeps the delay and the full-page scroll the request asks for', () => {
    const budget = waitBudgetMs(
      request(30_000),
      options({ delay: 2_000, fullPage: true, fullPageScroll: true, fullPageScrollDuration: 3_000 }),
    );
    expect(budget).toBeLessThanOrEqual(20_000);
    expect(budget).toBeGreaterThan(19_900);
  });

  it('gives the whole time left (less 0.5 s) with failOnWaitTimeout', () => {
    const budget = waitBudgetMs(request(30_000), options({ failOnWaitTimeout: true }));
    expect(budget).toBeLessThanOrEqual(29_500);
    expect(budget).toBeGreaterThan(29_400);
  });

  it('never answers less than 1 ms', () => {
    expect(waitBudgetMs(request(-5), options())).toBe(1);
  });
});
