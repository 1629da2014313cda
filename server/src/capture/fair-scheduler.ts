import { ApiError } from '../errors.js';
import { CaptureTimeoutError, ClientGoneError } from './renderer.js';

/**
 * Fair share of the browser between organizations (issue #15). It sits in front of the context
 * pool with the pool's concurrency, so the pool's own queue stays empty: each organization has its
 * own FIFO queue, waiting organizations are served round-robin, and one organization never runs
 * more than its share of the slots, so a few hostile `while(true){}` pages cannot make everyone
 * else wait for their deadlines.
 */
export interface FairSchedulerOptions {
  /** Slots in the pool (CONCURRENCY). */
  concurrency: number;
  /** Captures that may wait in total before new ones are refused with 503 (MAX_QUEUE). */
  maxQueue: number;
  /** Fraction of the slots one organization may hold while others wait (MAX_ORG_SHARE_PERCENT / 100). */
  maxOrgShare: number;
}

interface Waiter {
  organizationId: string;
  start: () => void;
  cancel: (error: Error) => void;
}

export interface TurnRequest {
  deadline: number;
  signal: AbortSignal;
}

export class FairScheduler {
  private running = 0;
  private readonly runningByOrg = new Map<string, number>();
  private readonly queues = new Map<string, Waiter[]>();
  /** Organizations with waiters, in the order they are offered the next free slot. */
  private readonly rotation: string[] = [];
  private waitingTotal = 0;

  constructor(private readonly options: FairSchedulerOptions) {}

  /** Slots one organization may hold at once: at least one, at most all. */
  get perOrganizationLimit(): number {
    const { concurrency, maxOrgShare } = this.options;
    return Math.min(concurrency, Math.max(1, Math.floor(concurrency * maxOrgShare)));
  }

  /** Runs the task when the organization's turn comes; rejects if it is given up while waiting. */
  async run<T>(organizationId: string, request: TurnRequest, task: () => Promise<T>): Promise<T> {
    await this.turn(organizationId, request);
    try {
      return await task();
    } finally {
      this.finish(organizationId);
    }
  }

  /** For /metrics: how many organizations wait and the longest per-organization queue, no names. */
  snapshot(): { running: number; waiting: number; waitingOrganizations: number; longestOrganizationQueue: number } {
    let longest = 0;
    for (const queue of this.queues.values()) longest = Math.max(longest, queue.length);
    return { running: this.running, waiting: this.waitingTotal, waitingOrganizations: this.queues.size, longestOrganizationQueue: longest };
  }

  private canStart(organizationId: string): boolean {
    if (this.running >= this.options.concurrency) return false;
    if ((this.runningByOrg.get(organizationId) ?? 0) < this.perOrganizationLimit) return true;
    // Above its share only into spare capacity while no one else waits, and one slot always stays
    // free, so that another organization arriving is served at once rather than after a deadline.
    const othersWaiting = [...this.queues.keys()].some((other) => other !== organizationId);
    return !othersWaiting && this.running + 1 < this.options.concurrency;
  }

  private turn(organizationId: string, request: TurnRequest): Promise<void> {
    if (request.signal.aborted) return Promise.reject(new ClientGoneError());
    // A free slot exists with others waiting only when they are all at their share: no one is overtaken.
    if (!this.queues.has(organizationId) && this.canStart(organizationId)) {
      this.begin(organizationId);
      return Promise.resolve();
    }
    if (this.waitingTotal >= this.options.maxQueue) {
      return Promise.reject(
        new ApiError('SERVICE_UNAVAILABLE', 'All capture slots are busy and the queue is full; retry shortly. Nothing was charged.', { retryAfterSeconds: 2 }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        organizationId,
        start: () => {
          cleanup();
          resolve();
        },
        cancel: (error) => {
          cleanup();
          reject(error);
        },
      };
      const onAbort = () => this.giveUp(waiter, new ClientGoneError());
      request.signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => this.giveUp(waiter, new CaptureTimeoutError('waiting for a capture slot')), Math.max(0, request.deadline - Date.now()));
      const queue = this.queues.get(organizationId);
      if (queue) queue.push(waiter);
      else {
        this.queues.set(organizationId, [waiter]);
        this.rotation.push(organizationId);
      }
      this.waitingTotal += 1;
      this.dispatch();
    });
  }

  private begin(organizationId: string): void {
    this.running += 1;
    this.runningByOrg.set(organizationId, (this.runningByOrg.get(organizationId) ?? 0) + 1);
  }

  private finish(organizationId: string): void {
    this.running -= 1;
    const left = (this.runningByOrg.get(organizationId) ?? 1) - 1;
    if (left <= 0) this.runningByOrg.delete(organizationId);
    else this.runningByOrg.set(organizationId, left);
    this.dispatch();
  }

  /** A waiter whose deadline passed or whose client left: it stops holding a queue place. */
  private giveUp(waiter: Waiter, error: Error): void {
    const queue = this.queues.get(waiter.organizationId);
    const index = queue ? queue.indexOf(waiter) : -1;
    if (!queue || index === -1) return;
    queue.splice(index, 1);
    this.waitingTotal -= 1;
    if (queue.length === 0) this.dropOrganization(waiter.organizationId);
    waiter.cancel(error);
  }

  private dropOrganization(organizationId: string): void {
    this.queues.delete(organizationId);
    const at = this.rotation.indexOf(organizationId);
    if (at !== -1) this.rotation.splice(at, 1);
  }

  /** Offers free slots round-robin to waiting organizations under their share. */
  private dispatch(): void {
    while (this.running < this.options.concurrency) {
      const at = this.rotation.findIndex((organizationId) => this.canStart(organizationId));
      if (at === -1) return;
      const organizationId = this.rotation[at]!;
      const queue = this.queues.get(organizationId)!;
      const waiter = queue.shift()!;
      this.waitingTotal -= 1;
      // The organization served goes to the back of the rotation.
      this.rotation.splice(at, 1);
      if (queue.length === 0) this.queues.delete(organizationId);
      else this.rotation.push(organizationId);
      this.begin(organizationId);
      waiter.start();
    }
  }
}
