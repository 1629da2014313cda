import { captureBudgetMs, videoStretchMs, type CaptureOptions } from '@daguerre/contract';
import { INSPECTION_GRACE_MS } from '../capture/insight/late-inspection.js';

/**
 * The deadlines of one capture (docs/video.md, "Deadlines"):
 * - `page`: CAPTURE_TIMEOUT_MS plus what the request asks to wait (captureBudgetMs) from its start,
 *   for every stage but a video's recording. A synchronous video counts it from its place in the
 *   video lane, within `limit`: the lane only lets it wait when it can still end by `limit`;
 * - `limit`: the latest the capture may run. A video's recording goes on past `page` while its
 *   frames come more slowly than `page` allows (a busy instance), up to the allowance of the longest
 *   video its route takes (videoStretchMs): under load it takes longer rather than being cut;
 * - `reservation`: when its credit reservation may be released as stale: after `limit` and the grace
 *   of the reading of the page after its file (late-inspection.ts).
 */
export interface CaptureDeadlines {
  budgetMs: number;
  page: number;
  limit: number;
  reservation: number;
}

export interface CaptureClock {
  /** An async job's capture starts when its lane place comes; a synchronous one when its request arrived. */
  started: number;
  /** When a video or long capture got its lane place (capture-lanes.ts). */
  placed?: number | undefined;
  async: boolean;
}

export function captureDeadlines(captureTimeoutMs: number, options: CaptureOptions, clock: CaptureClock): CaptureDeadlines {
  const budgetMs = captureBudgetMs(captureTimeoutMs, options);
  const limit = clock.started + budgetMs + videoStretchMs(options, clock.async);
  const page = Math.min(limit, (clock.placed ?? clock.started) + budgetMs);
  return { budgetMs, page, limit, reservation: limit + INSPECTION_GRACE_MS };
}
