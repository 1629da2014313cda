import { CaptureError, CaptureTimeoutError, ClientGoneError } from '../capture-error.js';
import { activeCount, preemptForWaiters, type Running } from './fair-share-preemption.js';

/**
 * Fair share of the browser between organizations (docs/render-slots.md). It sits in front of the
 * context pool with the pool's concurrency, so the pool's own queue stays empty: each organization
 * has its own FIFO queue, waiting organizations are served by weighted round-robin (a plan's
 * `fair_share_weight`), and one organization holds more than its share (`max_share_percent`, else
 * MAX_ORG_SHARE_PERCENT) only while no organization below its share waits.
 *
 * The scheduler is work-conserving: a free slot never stays idle while anyone waits, so an
 * organization alone may use every slot. Those extra captures are preemptible: when another
 * organization below its share arrives and no slot is free, the newest capture above a share is
 * aborted and put back at the front of its organization's queue (it starts again later, with its
 * own deadline unchanged). A few hostile `while(true){}` pages therefore cannot make everyone else
 * wait for their deadlines, and no slot is held back when there is no one to hold it for.
 */
export interface FairSchedulerOptions {
  /** Slots in the pool (CONCURRENCY). */
  concurrency: number;
  /** Captures that may wait in total before new ones are refused with 503 (MAX_QUEUE). */
  maxQueue: number;
  /** Default fraction of the slots one organization may hold while others wait (MAX_ORG_SHARE_PERCENT / 100). */
  maxOrgShare: number;
}

/** An organization's plan settings (plans.max_share_percent, plans.fair_share_weight). */
export interface FairShare {
  /** Percent of the slots; null for the MAX_ORG_SHARE_PERCENT default. */
  maxSharePercent: number | null;
  /** Turns per round of the weighted round-robin (at least 1). */
  weight: number;
  /** The plan's limit of concurrent captures (docs/render-slots.md, services/concurrency-gate.ts); null for the default. */
  maxConcurrentCaptures?: number | null;
}

export interface TurnRequest {
  deadline: number;
  signal: AbortSignal;
  /** The organization's plan settings; the defaults when absent. */
  share?: FairShare;
}

interface Waiter {
  organizationId: string;
  start: (running: Running) => void;
  cancel: (error: Error) => void;
}

export interface FairShareSnapshot {
  running: number;
  waiting: number;
  waitingOrganizations: number;
  longestOrganizationQueue: number;
  /** Queue length of each waiting organization, without names (for /metrics). */
  queueDepths: number[];
  /** Organizations holding more slots than their share right now. */
  organizationsOverShare: number;
}

export class FairScheduler {
  private running = 0;
  private readonly runningByOrg = new Map<string, Running[]>();
  private readonly queues = new Map<string, Waiter[]>();
  /** Organizations with waiters, in the order they are offered the next free slot. */
  private readonly rotation: string[] = [];
  /** Turns left in the current round for an organization in the rotation (its weight at most). */
  private readonly turnsLeft = new Map<string, number>();
  private readonly shares = new Map<string, FairShare>();
  /** When each running or waiting organization last got a slot (a counter, for order): see enterRotation. */
  private readonly lastGranted = new Map<string, number>();
  private grants = 0;
  private waitingTotal = 0;

  constructor(private readonly options: FairSchedulerOptions) {}

  /** Slots one organization may hold while others below their share wait: at least one, at most all. */
  limitOf(organizationId: string): number {
    const { concurrency, maxOrgShare } = this.options;
    const percent = this.shares.get(organizationId)?.maxSharePercent ?? maxOrgShare * 100;
    return Math.min(concurrency, Math.max(1, Math.floor((concurrency * percent) / 100)));
  }

  private weightOf(organizationId: string): number {
    return Math.max(1, Math.floor(this.shares.get(organizationId)?.weight ?? 1));
  }

  /**
   * Runs the task when the organization's turn comes; rejects if it is given up while waiting.
   * The task gets a signal that aborts when the client leaves or the capture is preempted; a
   * preempted task is run again on the organization's next turn.
   */
  async run<T>(organizationId: string, request: TurnRequest, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (request.share) this.shares.set(organizationId, request.share);
    let requeued = false;
    for (;;) {
      const running = await this.turn(organizationId, request, requeued);
      try {
        // Preempted between its turn and its start: it goes back to the queue without starting.
        if (running.preempted) throw new ClientGoneError();
        return await task(AbortSignal.any([request.signal, running.controller.signal]));
      } catch (error) {
        if (!running.preempted || request.signal.aborted || Date.now() >= request.deadline) throw error;
      } finally {
        this.finish(organizationId, running);
      }
      requeued = true;
    }
  }

  /** For /metrics: queue lengths and shares, no organization names. */
  snapshot(): FairShareSnapshot {
    const queueDepths = [...this.queues.values()].map((queue) => queue.length);
    let overShare = 0;
    for (const organizationId of this.runningByOrg.keys())
      if (activeCount(this.runningByOrg, organizationId) > this.limitOf(organizationId)) overShare += 1;
    return {
      running: this.running,
      waiting: this.waitingTotal,
      waitingOrganizations: this.queues.size,
      longestOrganizationQueue: Math.max(0, ...queueDepths),
      queueDepths,
      organizationsOverShare: overShare,
    };
  }

  private runningCount(organizationId: string): number {
    return this.runningByOrg.get(organizationId)?.length ?? 0;
  }

  private belowShare(organizationId: string): boolean {
    return this.runningCount(organizationId) < this.limitOf(organizationId);
  }

  private turn(organizationId: string, request: TurnRequest, requeued: boolean): Promise<Running> {
    if (request.signal.aborted) return Promise.reject(new ClientGoneError());
    // Work-conserving: a free slot with no one waiting is taken at once, whatever the share.
    if (this.rotation.length === 0 && this.running < this.options.concurrency) return Promise.resolve(this.begin(organizationId));
    // A preempted capture was admitted already: it is never refused for a full queue.
    if (!requeued && this.waitingTotal >= this.options.maxQueue) {
      return Promise.reject(
        new CaptureError('slots-full', 'All capture slots are busy and the queue is full; retry shortly. Nothing was charged.', {
          retryAfterSeconds: 2,
        }),
      );
    }
    return new Promise<Running>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        organizationId,
        start: (running) => {
          cleanup();
          resolve(running);
        },
        cancel: (error) => {
          cleanup();
          reject(error);
        },
      };
      const onAbort = () => this.giveUp(waiter, new ClientGoneError());
      request.signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(
        () => this.giveUp(waiter, new CaptureTimeoutError('waiting for a capture slot')),
        Math.max(0, request.deadline - Date.now()),
      );
      const queue = this.queues.get(organizationId);
      if (queue) {
        if (requeued) queue.unshift(waiter);
        else queue.push(waiter);
      } else {
        this.queues.set(organizationId, [waiter]);
        this.enterRotation(organizationId);
      }
      this.waitingTotal += 1;
      this.dispatch();
      this.preemptForWaiters();
    });
  }

  /**
   * An organization starts waiting: it joins the rotation ahead of those served more recently than
   * itself. Appended at the end, an organization arriving while two others flood two slots came
   * after both of their next captures: it waited two captures, and with hung pages
   * two hostile deadlines. Never-served ones keep their order of arrival.
   */
  private enterRotation(organizationId: string): void {
    const served = this.lastGranted.get(organizationId) ?? 0;
    let at = this.rotation.findIndex((other) => (this.lastGranted.get(other) ?? 0) > served);
    if (at === -1) at = this.rotation.length;
    this.rotation.splice(at, 0, organizationId);
    this.turnsLeft.set(organizationId, this.weightOf(organizationId));
  }

  private begin(organizationId: string): Running {
    this.grants += 1;
    this.lastGranted.set(organizationId, this.grants);
    const running: Running = { controller: new AbortController(), preempted: false };
    this.running += 1;
    const list = this.runningByOrg.get(organizationId);
    if (list) list.push(running);
    else this.runningByOrg.set(organizationId, [running]);
    return running;
  }

  private finish(organizationId: string, running: Running): void {
    this.running -= 1;
    const list = this.runningByOrg.get(organizationId) ?? [];
    const at = list.indexOf(running);
    if (at !== -1) list.splice(at, 1);
    if (list.length === 0) this.runningByOrg.delete(organizationId);
    this.forgetIfIdle(organizationId);
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
    this.turnsLeft.delete(organizationId);
    const at = this.rotation.indexOf(organizationId);
    if (at !== -1) this.rotation.splice(at, 1);
    this.forgetIfIdle(organizationId);
  }

  /** Plan settings are kept only while the organization runs or waits: the map stays bounded. */
  private forgetIfIdle(organizationId: string): void {
    if (!this.runningByOrg.has(organizationId) && !this.queues.has(organizationId)) {
      this.shares.delete(organizationId);
      this.lastGranted.delete(organizationId);
    }
  }

  /**
   * Gives free slots by weighted round-robin: first to waiting organizations below their share,
   * and only when there is none of those, to the others (above their share, preemptible).
   */
  private dispatch(): void {
    while (this.running < this.options.concurrency && this.rotation.length > 0) {
      let at = this.rotation.findIndex((organizationId) => this.belowShare(organizationId));
      if (at === -1) at = 0;
      const organizationId = this.rotation[at]!;
      const queue = this.queues.get(organizationId)!;
      const waiter = queue.shift()!;
      this.waitingTotal -= 1;
      const turns = (this.turnsLeft.get(organizationId) ?? 1) - 1;
      if (queue.length === 0) this.dropOrganization(organizationId);
      else if (turns <= 0) {
        // Its turns for this round are used: to the back of the rotation, with a full round's turns.
        this.rotation.splice(at, 1);
        this.rotation.push(organizationId);
        this.turnsLeft.set(organizationId, this.weightOf(organizationId));
      } else this.turnsLeft.set(organizationId, turns);
      waiter.start(this.begin(organizationId));
    }
  }

  /** Preempts captures above their share for the organizations below theirs that wait (fair-share-preemption.ts). */
  private preemptForWaiters(): void {
    preemptForWaiters({
      queues: this.queues,
      runningByOrg: this.runningByOrg,
      free: this.options.concurrency - this.running,
      limitOf: (organizationId) => this.limitOf(organizationId),
    });
  }
}
