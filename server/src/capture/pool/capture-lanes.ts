import { isVideoFormat, requestedWaitMs, type CaptureOptions } from '@daguerre/contract';
import { LongCaptureLane } from './long-capture-lane.js';
import { CaptureTimeoutError, isCaptureError } from '../capture-error.js';
import { VideoEstimate, videoShape } from './video-estimate.js';

/**
 * Which lane a capture takes before it asks for a render slot (long-capture-lane.ts): videos one,
 * captures whose own waits (`delay`, the full-page scroll) reach LONG_CAPTURE_WAIT_MS another,
 * everything else none. Between them the two lanes always leave render slots free for the rest.
 */
export const LONG_CAPTURE_WAIT_MS = 10_000;
/** A long capture's time beyond the waits it asks for: loading, rendering, encoding. */
const LONG_CAPTURE_OVERHEAD_MS = 5_000;

/** A capture that ran out of time, in the capture's own words; the caller names its own (LaneRequest.ranOutOfTime). */
const isTimeout = (error: unknown) => error instanceof CaptureTimeoutError || isCaptureError(error, 'page-unresponsive');

export interface CaptureLanesOptions {
  /** MAX_CONCURRENCY. */
  renderSlots: number;
  /** VIDEO_CONCURRENCY. */
  videoSlots: number;
  maxOrgSharePercent: number;
}

export interface LaneRequest {
  organizationId: string;
  options: CaptureOptions;
  sync: boolean;
  deadline: number;
  signal: AbortSignal;
  sharePercent: number | null;
  /** Whether a failure of the task is its running out of time, as the caller answers it (the service's mapped answers). */
  ranOutOfTime?: (error: unknown) => boolean;
}

export class CaptureLanes {
  private readonly videoEstimate = new VideoEstimate();
  private readonly videos: LongCaptureLane;
  private readonly long: LongCaptureLane;

  constructor(options: CaptureLanesOptions) {
    const share = { maxOrgSharePercent: options.maxOrgSharePercent };
    this.videos = new LongCaptureLane({ ...share, slots: options.videoSlots, words: { one: 'video', many: 'videos', runs: 'records' } });
    // What the videos leave, less one slot kept for short captures; at least one.
    const longSlots = Math.max(1, options.renderSlots - options.videoSlots - 1);
    this.long = new LongCaptureLane({ ...share, slots: longSlots, words: { one: 'long capture', many: 'long captures', runs: 'runs' } });
  }

  /** Whether the capture takes a lane at all. */
  static needsLane(options: CaptureOptions): boolean {
    return isVideoFormat(options.format) || requestedWaitMs(options) >= LONG_CAPTURE_WAIT_MS;
  }

  /** Runs the task when the capture has its place (at once for a capture that needs none). */
  run<T>(request: LaneRequest, task: () => Promise<T>): Promise<T> {
    const { options } = request;
    const base = {
      organizationId: request.organizationId,
      sync: request.sync,
      deadline: request.deadline,
      signal: request.signal,
      sharePercent: request.sharePercent,
    };
    if (isVideoFormat(options.format)) {
      const shape = videoShape(options);
      const ticket = {
        ...base,
        expectedMs: this.videoEstimate.expectedMs(shape),
        why: `${shape.frames} frames of ${(shape.framePixels / 1e6).toFixed(1)} Mpx at this instance's measured speed`,
      };
      return this.videos.run(ticket, async () => {
        const started = Date.now();
        try {
          const result = await task();
          this.videoEstimate.learn(shape, Date.now() - started);
          return result;
        } catch (error) {
          // Out of time while it recorded: it needed more than the whole budget, so the next such video is refused up front.
          if (isTimeout(error) || request.ranOutOfTime?.(error)) this.videoEstimate.learnTooSlow(shape, Date.now() - started);
          throw error;
        }
      });
    }
    const waits = requestedWaitMs(options);
    if (waits < LONG_CAPTURE_WAIT_MS) return task();
    const ticket = {
      ...base,
      expectedMs: waits + LONG_CAPTURE_OVERHEAD_MS,
      why: `it asks to wait ${Math.round(waits / 1000)} s (delay and full-page scroll)`,
    };
    return this.long.run(ticket, task);
  }
}
