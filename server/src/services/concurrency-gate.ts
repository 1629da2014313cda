import { ApiError } from '../errors.js';
import { CaptureTimeoutError, ClientGoneError } from '../capture/capture-error.js';
import type { PlaceOutcome, SharedCapturePlaces } from './shared-capture-places.js';

/**
 * The per-plan limit of concurrent captures (docs/render-slots.md), as commercial screenshot APIs
 * have one: an organization may have at most N captures in progress (waiting for a browser slot,
 * rendering, uploading) on this instance. A synchronous capture past the limit is refused at once
 * with 429 CONCURRENCY_LIMIT_EXCEEDED and Retry-After (nothing reserved, nothing charged), so a
 * client learns its limit instead of timing out in a queue. An async job is never refused for it:
 * the queue already holds it, so it waits here for a place, within its own deadline.
 *
 * The count is kept per process and, with REDIS_URL, across every instance and worker
 * (shared-capture-places.ts): with several API instances behind a balancer an organization still
 * has at most N in progress in all. Without Redis, or while it cannot be reached, the count is this
 * process's only (docs/render-slots.md).
 */

/** The limit of organizations whose plan sets none (ORG_MAX_CONCURRENT_CAPTURES; 0: what one instance can hold). */
export function defaultConcurrentCaptures(config: {
  ORG_MAX_CONCURRENT_CAPTURES: number;
  MAX_CONCURRENCY: number;
  MAX_QUEUE: number;
}): number {
  return config.ORG_MAX_CONCURRENT_CAPTURES > 0 ? config.ORG_MAX_CONCURRENT_CAPTURES : config.MAX_CONCURRENCY + config.MAX_QUEUE;
}

export interface GateRequest {
  organizationId: string;
  /** The plan's limit; null or absent for the default. */
  planLimit?: number | null;
  /** Async jobs wait for a place; synchronous captures are refused at once. */
  wait: boolean;
  deadline: number;
  signal: AbortSignal;
}

export const concurrencyLimitExceeded = (limit: number) =>
  new ApiError(
    'CONCURRENCY_LIMIT_EXCEEDED',
    `Too many concurrent captures: your plan allows ${limit} at once and ${limit} are in progress; retry when one has finished. Nothing was charged.`,
    { retryAfterSeconds: 1 },
  );

export class ConcurrencyGate {
  private readonly active = new Map<string, number>();
  /** Async captures waiting for a place, per organization, in arrival order. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(
    readonly defaultLimit: number,
    private readonly shared?: SharedCapturePlaces,
  ) {}

  limitOf(planLimit: number | null | undefined): number {
    return planLimit ?? this.defaultLimit;
  }

  /** Captures of the organization in progress now. */
  activeOf(organizationId: string): number {
    return this.active.get(organizationId) ?? 0;
  }

  /** Takes a place for one capture; the returned function gives it back (once). */
  async enter(request: GateRequest): Promise<() => void> {
    const { organizationId } = request;
    const limit = this.limitOf(request.planLimit);
    while (this.activeOf(organizationId) >= limit) {
      if (!request.wait) throw concurrencyLimitExceeded(limit);
      await this.waitForPlace(request);
    }
    this.active.set(organizationId, this.activeOf(organizationId) + 1);
    let left = false;
    const leaveHere = () => {
      if (left) return;
      left = true;
      const now = this.activeOf(organizationId) - 1;
      if (now > 0) this.active.set(organizationId, now);
      else this.active.delete(organizationId);
      this.wakeNext(organizationId);
    };
    if (!this.shared || !Number.isFinite(limit)) return leaveHere;
    let place: PlaceOutcome;
    try {
      place = await this.shared.take(
        organizationId,
        limit,
        request.wait ? { deadline: request.deadline, signal: request.signal } : undefined,
      );
    } catch (error) {
      leaveHere();
      throw error;
    }
    if (!place.taken && place.reason === 'full') {
      leaveHere();
      if (!request.wait) throw concurrencyLimitExceeded(limit);
      throw new CaptureTimeoutError("waiting for one of the organization's other captures to finish (its plan's concurrent-capture limit)");
    }
    const releaseShared = place.taken ? place.release : () => undefined;
    return () => {
      releaseShared();
      leaveHere();
    };
  }

  /** Runs the task holding a place. */
  async run<T>(request: GateRequest, task: () => Promise<T>): Promise<T> {
    const leave = await this.enter(request);
    try {
      return await task();
    } finally {
      leave();
    }
  }

  private wakeNext(organizationId: string): void {
    const queue = this.waiting.get(organizationId);
    const next = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(organizationId);
    next?.();
  }

  private waitForPlace(request: GateRequest): Promise<void> {
    const { organizationId, signal } = request;
    if (signal.aborted) return Promise.reject(new ClientGoneError());
    return new Promise<void>((resolve, reject) => {
      const queue = this.waiting.get(organizationId) ?? [];
      this.waiting.set(organizationId, queue);
      const leaveQueue = () => {
        const at = queue.indexOf(wake);
        if (at !== -1) queue.splice(at, 1);
        if (queue.length === 0 && this.waiting.get(organizationId) === queue) this.waiting.delete(organizationId);
      };
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const wake = () => {
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        leaveQueue();
        reject(new ClientGoneError());
      };
      const timer = setTimeout(
        () => {
          done();
          leaveQueue();
          reject(
            new CaptureTimeoutError("waiting for one of the organization's other captures to finish (its plan's concurrent-capture limit)"),
          );
        },
        Math.max(0, request.deadline - Date.now()),
      );
      signal.addEventListener('abort', onAbort, { once: true });
      queue.push(wake);
    });
  }
}
