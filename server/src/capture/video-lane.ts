import { ApiError } from '../errors.js';
import { CaptureTimeoutError, ClientGoneError } from './stage-guard.js';
import { VideoEstimate, type VideoShape } from './video-estimate.js';

/**
 * Videos take their own lane (docs/video.md, "Videos and the other organizations"). A video keeps
 * a render slot and about a core busy for its whole recording, which may be minutes, where a
 * screenshot takes a second; counted as one capture like any other, six videos held every slot of
 * an instance for three minutes. So:
 * - at most `slots` videos record at once on the instance (VIDEO_CONCURRENCY), always fewer than its
 *   render slots: the rest are kept for everything else;
 * - an organization records at most its share of them (its plan's max_share_percent, else
 *   MAX_ORG_SHARE_PERCENT, at least one);
 * - waiting videos start in the order of least recent video time: an organization's turn costs what
 *   its videos were expected to take (decayed over VIDEO_USAGE_HALF_LIFE_MS), not one capture each;
 * - a synchronous video is refused at once (503 with Retry-After, nothing reserved or charged) when
 *   the instance cannot finish it within the request's own deadline: its expected recording time
 *   (video-estimate.ts) plus the wait for a free place in the lane. It never waits to time out;
 * - an asynchronous video waits for a place, within its job's deadline.
 */
export interface VideoLaneOptions {
  slots: number;
  /** Default share of the lane's slots one organization may hold (MAX_ORG_SHARE_PERCENT). */
  maxOrgSharePercent: number;
}

export interface VideoTicket {
  organizationId: string;
  shape: VideoShape;
  /** Synchronous requests are refused rather than held past their deadline. */
  sync: boolean;
  deadline: number;
  signal: AbortSignal;
  /** The plan's max_share_percent, when it sets one. */
  sharePercent?: number | null;
}

interface Recording {
  organizationId: string;
  expectedEnd: number;
}

interface Waiter {
  ticket: VideoTicket;
  start: () => void;
  refuse: (error: Error) => void;
}

const VIDEO_USAGE_HALF_LIFE_MS = 10 * 60_000;

const busy = (message: string, retryAfterMs: number) =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    `${message} Send it to POST /captures (async) to have it recorded when a place is free; nothing was charged.`,
    {
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    },
  );

export class VideoLane {
  readonly estimate = new VideoEstimate();
  private readonly recording: Recording[] = [];
  private readonly waiting: Waiter[] = [];
  /** Video time each organization was granted, decayed: { value in ms, when it was last decayed }. */
  private readonly usage = new Map<string, { value: number; at: number }>();

  constructor(private readonly options: VideoLaneOptions) {}

  /** Runs the task when the video has a place in the lane; a synchronous one that cannot finish in time is refused first. */
  async run<T>(ticket: VideoTicket, task: () => Promise<T>): Promise<T> {
    const entry = await this.enter(ticket);
    const started = Date.now();
    try {
      const result = await task();
      this.estimate.learn(ticket.shape, Date.now() - started);
      return result;
    } finally {
      this.recording.splice(this.recording.indexOf(entry), 1);
      this.dispatch();
    }
  }

  /** Slots one organization may hold: its share of the lane, at least one. */
  shareOf(ticket: Pick<VideoTicket, 'sharePercent'>): number {
    const percent = ticket.sharePercent ?? this.options.maxOrgSharePercent;
    return Math.min(this.options.slots, Math.max(1, Math.floor((this.options.slots * percent) / 100)));
  }

  snapshot(): { recording: number; waiting: number } {
    return { recording: this.recording.length, waiting: this.waiting.length };
  }

  /** Its place is taken at once, in the same turn as the check, so that no second video can slip in. */
  private grant(ticket: VideoTicket): Recording {
    const expected = this.estimate.expectedMs(ticket.shape);
    const entry: Recording = { organizationId: ticket.organizationId, expectedEnd: Date.now() + expected };
    this.recording.push(entry);
    this.charge(ticket.organizationId, expected);
    return entry;
  }

  private enter(ticket: VideoTicket): Promise<Recording> {
    if (ticket.signal.aborted) return Promise.reject(new ClientGoneError());
    if (ticket.sync) this.refuseIfLate(ticket);
    if (this.canStartNow(ticket)) return Promise.resolve(this.grant(ticket));
    return new Promise<Recording>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        ticket.signal.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        ticket,
        start: () => {
          cleanup();
          resolve(this.grant(ticket));
        },
        refuse: (error) => {
          cleanup();
          reject(error);
        },
      };
      const leave = (error: Error) => {
        const at = this.waiting.indexOf(waiter);
        if (at === -1) return;
        this.waiting.splice(at, 1);
        waiter.refuse(error);
      };
      const onAbort = () => leave(new ClientGoneError());
      ticket.signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(
        () => leave(new CaptureTimeoutError('waiting for a place to record the video')),
        Math.max(0, ticket.deadline - Date.now()),
      );
      this.waiting.push(waiter);
      this.dispatch();
    });
  }

  private recordingOf(organizationId: string): number {
    return this.recording.filter((entry) => entry.organizationId === organizationId).length;
  }

  /** A free place it may take, and no waiting video that could take it before it. */
  private canStartNow(ticket: VideoTicket): boolean {
    return this.canStart(ticket) && !this.waiting.some((waiter) => this.canStart(waiter.ticket));
  }

  private canStart(ticket: VideoTicket): boolean {
    return this.recording.length < this.options.slots && this.recordingOf(ticket.organizationId) < this.shareOf(ticket);
  }

  /**
   * A synchronous video is refused when it cannot end by its deadline: its organization already
   * records or waits for its share, the recording alone would outlast it, or it would wait for
   * others' videos longer than it can.
   */
  private refuseIfLate(ticket: VideoTicket): void {
    const now = Date.now();
    const expected = this.estimate.expectedMs(ticket.shape);
    const seconds = (ms: number) => Math.round(ms / 1000);
    const share = this.shareOf(ticket);
    const ownWaiting = this.waiting.filter((waiter) => waiter.ticket.organizationId === ticket.organizationId).length;
    const soonestEnd = Math.min(...this.recording.map((entry) => entry.expectedEnd));
    if (this.recordingOf(ticket.organizationId) + ownWaiting >= share) {
      throw busy(
        `Your organization already has ${share === 1 ? 'a video' : `${share} videos`} recording or waiting on this instance, its share of the ${this.options.slots} it records at once.`,
        Math.max(0, soonestEnd - now),
      );
    }
    if (now + expected > ticket.deadline) {
      throw busy(
        `This video would take about ${seconds(expected)} s to record here (${ticket.shape.frames} frames of ${(ticket.shape.framePixels / 1e6).toFixed(1)} Mpx at this instance's measured speed), more than the ${seconds(ticket.deadline - now)} s left to a synchronous request.`,
        0,
      );
    }
    if (this.canStartNow(ticket)) return;
    // Its place: after every waiting video, each of which needs a slot as long as itself (roughly).
    const wait =
      Math.max(0, soonestEnd - now) +
      this.waiting.reduce((sum, waiter) => sum + this.estimate.expectedMs(waiter.ticket.shape), 0) / this.options.slots;
    if (now + wait + expected > ticket.deadline) {
      throw busy(
        `This instance records ${this.options.slots === 1 ? 'one video' : `${this.options.slots} videos`} at a time and is busy for about ${seconds(wait)} s; this video needs about ${seconds(expected)} s more, past the ${seconds(ticket.deadline - now)} s left to a synchronous request.`,
        wait,
      );
    }
  }

  /** A place freed: the waiting video of the organization with the least recent video time starts. */
  private dispatch(): void {
    for (;;) {
      const now = Date.now();
      // A synchronous video that can no longer end in time is refused now rather than started to time out.
      for (const waiter of [...this.waiting]) {
        if (waiter.ticket.sync && now + this.estimate.expectedMs(waiter.ticket.shape) > waiter.ticket.deadline) {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          waiter.refuse(busy('This video waited for a place to record and can no longer end within its synchronous request.', 0));
        }
      }
      const startable = this.waiting.filter((waiter) => this.canStart(waiter.ticket));
      if (startable.length === 0) return;
      const next = startable.reduce((best, waiter) =>
        this.usageOf(waiter.ticket.organizationId, now) < this.usageOf(best.ticket.organizationId, now) ? waiter : best,
      );
      this.waiting.splice(this.waiting.indexOf(next), 1);
      next.start();
    }
  }

  private usageOf(organizationId: string, now: number): number {
    const entry = this.usage.get(organizationId);
    if (!entry) return 0;
    return entry.value * 0.5 ** ((now - entry.at) / VIDEO_USAGE_HALF_LIFE_MS);
  }

  private charge(organizationId: string, ms: number): void {
    const now = Date.now();
    this.usage.set(organizationId, { value: this.usageOf(organizationId, now) + ms, at: now });
    // Organizations whose video time has decayed to nothing are forgotten: the map stays bounded.
    for (const [id] of this.usage) if (this.usageOf(id, now) < 1_000 && id !== organizationId) this.usage.delete(id);
  }
}
