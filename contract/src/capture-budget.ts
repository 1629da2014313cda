import { LIMITS } from './limits.js';
import { MAX_VIDEO_WAIT_MS, videoWaitMs } from './video-options.js';

/**
 * Waits a request asks for (`delay`, the full-page scroll, a video's length) lengthen its deadline by
 * as much, so that a valid request never fails only because of its own valid values. The extension
 * is bounded by the parameters' maxima.
 */
export const MAX_REQUESTED_WAIT_MS = LIMITS.delayMaxMs + LIMITS.scrollDurationMaxMs + MAX_VIDEO_WAIT_MS;

type BudgetOptions = {
  delay: number;
  fullPage: boolean;
  fullPageScroll: boolean;
  fullPageScrollDuration: number;
  format?: string;
  videoDuration?: number;
  videoFps?: number;
};

/** What the request itself asks to wait, in ms (the scroll counts only when it happens). */
export function requestedWaitMs(options: BudgetOptions): number {
  const scroll = options.fullPage && options.fullPageScroll ? options.fullPageScrollDuration : 0;
  return Math.min(MAX_REQUESTED_WAIT_MS, options.delay + scroll + videoWaitMs(options));
}

/** The time a capture may take, queue included: the configured timeout plus what the request asks to wait. */
export function captureBudgetMs(captureTimeoutMs: number, options: BudgetOptions): number {
  return captureTimeoutMs + requestedWaitMs(options);
}

/** The longest any capture may take under this timeout (reservations older than it are stale). */
export function maxCaptureBudgetMs(captureTimeoutMs: number): number {
  return captureTimeoutMs + MAX_REQUESTED_WAIT_MS;
}
