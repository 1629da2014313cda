import { LIMITS } from './limits.js';

/**
 * Waits a request asks for (`delay`, and the full-page scroll) lengthen its deadline by as much, so
 * that a valid request never fails only because of its own valid values. The extension is bounded by
 * the two parameters' maxima: at most `CAPTURE_TIMEOUT_MS` + 60 s in all.
 */
export const MAX_REQUESTED_WAIT_MS = LIMITS.delayMaxMs + LIMITS.scrollDurationMaxMs;

/** What the request itself asks to wait, in ms (the scroll counts only when it happens). */
export function requestedWaitMs(options: { delay: number; fullPage: boolean; fullPageScroll: boolean; fullPageScrollDuration: number }): number {
  const scroll = options.fullPage && options.fullPageScroll ? options.fullPageScrollDuration : 0;
  return Math.min(MAX_REQUESTED_WAIT_MS, options.delay + scroll);
}

/** The time a capture may take, queue included: the configured timeout plus what the request asks to wait. */
export function captureBudgetMs(captureTimeoutMs: number, options: Parameters<typeof requestedWaitMs>[0]): number {
  return captureTimeoutMs + requestedWaitMs(options);
}

/** The longest any capture may take under this timeout (reservations older than it are stale). */
export function maxCaptureBudgetMs(captureTimeoutMs: number): number {
  return captureTimeoutMs + MAX_REQUESTED_WAIT_MS;
}
