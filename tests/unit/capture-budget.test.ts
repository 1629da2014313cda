import {
  captureBudgetMs,
  LIMITS,
  MAX_VIDEO_WAIT_MS,
  VIDEO_LIMITS,
  MAX_REQUESTED_WAIT_MS,
  maxCaptureBudgetMs,
  requestedWaitMs,
} from '@daguerre/contract';
import { describe, expect, it } from 'vitest';

const base = { delay: 0, fullPage: false, fullPageScroll: false, fullPageScrollDuration: 1000 };

describe('capture budget: the deadline grows by what the request asks to wait', () => {
  it('is the configured timeout when nothing is asked', () => {
    expect(captureBudgetMs(30_000, base)).toBe(30_000);
  });

  it('adds the delay, and the scroll duration only when a full-page scroll happens', () => {
    expect(captureBudgetMs(30_000, { ...base, delay: 5_000 })).toBe(35_000);
    expect(captureBudgetMs(30_000, { ...base, fullPageScroll: true, fullPageScrollDuration: 4_000 })).toBe(30_000);
    expect(captureBudgetMs(30_000, { ...base, fullPage: true, fullPageScroll: true, fullPageScrollDuration: 4_000 })).toBe(34_000);
  });

  it("adds a video's length and an allowance per frame", () => {
    expect(captureBudgetMs(30_000, { ...base, format: 'mp4', videoDuration: 10, videoFps: 20 })).toBe(30_000 + 10_000 + 200 * 200);
    expect(captureBudgetMs(30_000, { ...base, format: 'png', videoDuration: 10, videoFps: 20 })).toBe(30_000);
  });

  it('covers the largest valid delay, scroll and video together, and no more', () => {
    const largest = {
      delay: LIMITS.delayMaxMs,
      fullPage: true,
      fullPageScroll: true,
      fullPageScrollDuration: LIMITS.scrollDurationMaxMs,
      format: 'webm',
      videoDuration: VIDEO_LIMITS.durationMaxSeconds,
      videoFps: VIDEO_LIMITS.fpsMax,
    };
    expect(requestedWaitMs(largest)).toBe(LIMITS.delayMaxMs + LIMITS.scrollDurationMaxMs + MAX_VIDEO_WAIT_MS);
    expect(captureBudgetMs(30_000, largest)).toBe(maxCaptureBudgetMs(30_000));
    expect(maxCaptureBudgetMs(30_000)).toBe(30_000 + MAX_REQUESTED_WAIT_MS);
  });
});
