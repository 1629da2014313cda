import { CaptureError, CaptureTimeoutError, ClientGoneError } from '../capture-error.js';

/**
 * Long captures take their own lane. A screenshot holds a render slot for about a second; a video
 * holds one (and about a core) for its whole recording, a capture with a long `delay` or
 * full-page scroll for up to a minute. Counted as one capture each, six videos of two
 * organizations held every slot of an instance for three minutes, and everyone else's captures
 * timed out. So each kind has a lane (runtime.ts makes one for videos, VIDEO_CONCURRENCY, and one
 * for other long captures), whose places are always fewer than the render slots:
 * - at most `slots` of its captures run at once on the instance; the other slots stay for everything else;
 * - an organization holds at most its share of them (its plan's max_share_percent, else
 *   MAX_ORG_SHARE_PERCENT, at least one);
 * - waiting captures start in the order of least recent lane time: an organization's turn costs
 *   what its captures were expected to take (decayed over USAGE_HALF_LIFE_MS), not one each;
 * - a synchronous capture is refused at once (503 with Retry-After, nothing reserved or charged)
 *   when the instance cannot finish it within the request's own deadline: its expected time plus
 *   the wait for a free place. It never waits to time out;
 * - an asynchronous one waits for a place, within its job's deadline.
 * docs/video.md ("Videos and the other organizations") and docs/render-slots.md.
 */
export interface LaneOptions {
  slots: number;
  /** Default share of the lane's slots one organization may hold (MAX_ORG_SHARE_PERCENT). */
  maxOrgSharePercent: number;
  /** The lane's captures in its messages: { one: 'video', many: 'videos', runs: 'records' }. */
  words: { one: string; many: string; runs: string };
}

export interface LaneTicket {
  organizationId: string;
  /** What the capture is expected to take once it has a place, in ms. */
  expectedMs: number;
  /** Why it takes that long, for a refusal's message ("144 frames of 0.9 Mpx at this instance's measured speed"). */
  why: string;
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
  ticket: LaneTicket;
  start: () => void;
  refuse: (error: Error) => void;
}

const USAGE_HALF_LIFE_MS = 10 * 60_000;

const busy = (message: string, retryAfterMs: number) =>
  new CaptureError(
    'lane-busy',
    `${message} Send it to POST /captures (async) to have it recorded when a place is free; nothing was charged.`,
    {
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    },
  );

export class LongCaptureLane {
  private readonly recording: Recording[] = [];
  private readonly waiting: Waiter[] = [];
  /** Lane time each organization was granted, decayed: { value in ms, when it was last decayed }. */
  private readonly usage = new Map<string, { value: number; at: number }>();

  constructor(private readonly options: LaneOptions) {}

  /** Runs the task when the capture has a place in the lane; a synchronous one that cannot finish in time is refused first. */
  async run<T>(ticket: LaneTicket, task: () => Promise<T>): Promise<T> {
    const entry = await this.enter(ticket);
    try {
      return await task();
    } finally {
      this.recording.splice(this.recording.indexOf(entry), 1);
      this.dispatch();
    }
  }

  /** Slots one organization may hold: its share of the lane, at least one. */
  shareOf(ticket: Pick<LaneTicket, 'sharePercent'>): number {
    const percent = ticket.sharePercent ?? this.options.maxOrgSharePercent;
    return Math.min(this.options.slots, Math.max(1, Math.floor((this.options.slots * percent) / 100)));
  }

  snapshot(): { recording: number; waiting: number } {
    return { recording: this.recording.length, waiting: this.waiting.length };
  }

  /** Its place is taken at once, in the same turn as the check, so that no second capture can slip in. */
  private grant(ticket: LaneTicket): Recording {
    const expected = ticket.expectedMs;
    const entry: Recording = { organizationId: ticket.organizationId, expectedEnd: Date.now() + expected };
    this.recording.push(entry);
    this.charge(ticket.organizationId, expected);
    return entry;
  }

  private enter(ticket: LaneTicket): Promise<Recording> {
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
        () => leave(new CaptureTimeoutError(`waiting for a place among the instance's ${this.options.words.many}`)),
        Math.max(0, ticket.deadline - Date.now()),
      );
      this.waiting.push(waiter);
      this.dispatch();
    });
  }

  private recordingOf(organizationId: string): number {
    return this.recording.filter((entry) => entry.organizationId === organizationId).length;
  }

  /** A free place it may take, and no waiting capture that could take it before it. */
  private canStartNow(ticket: LaneTicket): boolean {
    return this.canStart(ticket) && !this.waiting.some((waiter) => this.canStart(waiter.ticket));
  }

  private canStart(ticket: LaneTicket): boolean {
    return this.recording.length < this.options.slots && this.recordingOf(ticket.organizationId) < this.shareOf(ticket);
  }

  /**
   * A synchronous capture is refused when it cannot end by its deadline: its organization already
   * runs or waits for its share, the capture alone would outlast it, or it would wait for others'
   * longer than it can.
   */
  private refuseIfLate(ticket: LaneTicket): void {
    const { slots, words } = this.options;
    const now = Date.now();
    const expected = ticket.expectedMs;
    const seconds = (ms: number) => Math.round(ms / 1000);
    const share = this.shareOf(ticket);
    const ownWaiting = this.waiting.filter((waiter) => waiter.ticket.organizationId === ticket.organizationId).length;
    const soonestEnd = Math.min(...this.recording.map((entry) => entry.expectedEnd));
    if (this.recordingOf(ticket.organizationId) + ownWaiting >= share) {
      throw busy(
        `Your organization already has ${share === 1 ? `a ${words.one}` : `${share} ${words.many}`} running or waiting on this instance, its share of the ${slots} it ${words.runs} at once.`,
        Math.max(0, soonestEnd - now),
      );
    }
    if (now + expected > ticket.deadline) {
      throw busy(
        `This ${words.one} would take about ${seconds(expected)} s here (${ticket.why}), more than the ${seconds(ticket.deadline - now)} s left to a synchronous request.`,
        0,
      );
    }
    if (this.canStartNow(ticket)) return;
    // Its place: after every waiting capture, each of which needs a place as long as itself (roughly).
    const wait = Math.max(0, soonestEnd - now) + this.waiting.reduce((sum, waiter) => sum + waiter.ticket.expectedMs, 0) / slots;
    if (now + wait + expected > ticket.deadline) {
      throw busy(
        `This instance ${words.runs} ${slots === 1 ? `one ${words.one}` : `${slots} ${words.many}`} at a time and is busy for about ${seconds(wait)} s; this ${words.one} needs about ${seconds(expected)} s more, past the ${seconds(ticket.deadline - now)} s left to a synchronous request.`,
        wait,
      );
    }
  }

  /** A place freed: the waiting capture of the organization with the least recent lane time starts. */
  private dispatch(): void {
    for (;;) {
      const now = Date.now();
      // A synchronous capture that can no longer end in time is refused now rather than started to time out.
      for (const waiter of [...this.waiting]) {
        if (waiter.ticket.sync && now + waiter.ticket.expectedMs > waiter.ticket.deadline) {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          waiter.refuse(busy(`This ${this.options.words.one} waited for a place and can no longer end within its synchronous request.`, 0));
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
    return entry.value * 0.5 ** ((now - entry.at) / USAGE_HALF_LIFE_MS);
  }

  private charge(organizationId: string, ms: number): void {
    const now = Date.now();
    this.usage.set(organizationId, { value: this.usageOf(organizationId, now) + ms, at: now });
    // Organizations whose lane time has decayed to nothing are forgotten: the map stays bounded.
    for (const [id] of this.usage) if (this.usageOf(id, now) < 1_000 && id !== organizationId) this.usage.delete(id);
  }
}
