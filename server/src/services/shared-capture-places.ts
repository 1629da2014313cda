import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Semaphore } from 'redis-semaphore';
import { ClientGoneError } from '../capture/capture-error.js';
import { ignoreBecause } from '../ignore-error.js';

/**
 * The places of a plan's concurrent-capture limit, counted in Redis so that the limit holds across
 * every API instance and worker (concurrency-gate.ts keeps the per-process count in front of it).
 * One sorted set per organization, handled by redis-semaphore
 * (https://github.com/swarthy/redis-semaphore): a place is a lease that its holder refreshes every
 * LEASE_MS / 3, so a capture of any length keeps its place, and the place of a process that was
 * killed is free again within LEASE_MS.
 *
 * When Redis cannot be reached the answer is 'unavailable' and the gate counts on this process only
 * (docs/render-slots.md says why: the rate limiter on the same Redis already refuses captures then,
 * and a second failure mode for the same outage would add nothing).
 */
export const LEASE_MS = 10_000;
const RETRY_MS = 200;

export type PlaceOutcome = { taken: true; release: () => void } | { taken: false; reason: 'full' | 'unavailable' };

export interface SharedCapturePlaces {
  /** One place of `limit` for the organization: at once (no `wait`), or waiting until `wait.deadline`. */
  take(organizationId: string, limit: number, wait?: { deadline: number; signal: AbortSignal }): Promise<PlaceOutcome>;
}

export class RedisCapturePlaces implements SharedCapturePlaces {
  private unavailableSince: number | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  async take(organizationId: string, limit: number, wait?: { deadline: number; signal: AbortSignal }): Promise<PlaceOutcome> {
    const semaphore = new Semaphore(this.redis, `${this.prefix}:daguerre:captures-in-progress:${organizationId}`, limit, {
      lockTimeout: LEASE_MS,
      refreshInterval: Math.round(LEASE_MS / 3),
      retryInterval: RETRY_MS,
      acquireAttemptsLimit: wait ? Number.POSITIVE_INFINITY : 1,
      acquireTimeout: wait ? Math.max(1, wait.deadline - Date.now()) : LEASE_MS,
      // A refresh that failed (Redis down for longer than a lease): the capture goes on; its place may be counted again.
      onLockLost: (error) => this.logger.warn({ organizationId, err: error }, 'a capture lost its place in the shared concurrency count'),
    });
    try {
      if (!(await semaphore.tryAcquire(wait?.signal))) return { taken: false, reason: 'full' };
    } catch (error) {
      if (wait?.signal.aborted) throw new ClientGoneError();
      this.noteUnavailable(error);
      return { taken: false, reason: 'unavailable' };
    }
    this.noteAvailable();
    let released = false;
    return {
      taken: true,
      release: () => {
        if (released) return;
        released = true;
        // A release that cannot reach Redis is left to the lease's end.
        semaphore.release().catch(ignoreBecause('a place Redis did not hear released ends with its lease'));
      },
    };
  }

  private noteUnavailable(error: unknown): void {
    if (this.unavailableSince !== undefined) return;
    this.unavailableSince = Date.now();
    this.logger.warn({ err: error }, "Redis cannot be reached: plans' concurrent-capture limits are counted per process until it is back");
  }

  private noteAvailable(): void {
    if (this.unavailableSince === undefined) return;
    this.logger.info(
      { downMs: Date.now() - this.unavailableSince },
      "Redis is back: plans' concurrent-capture limits are counted across instances again",
    );
    this.unavailableSince = undefined;
  }
}
