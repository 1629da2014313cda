import genericPool, { type Pool } from 'generic-pool';
import type { Logger } from 'pino';
import type { BrowserManager } from './browser-manager.js';
import { openSlot, resetSlot, usable, type Slot } from './pool-slot.js';

export type { Slot } from './pool-slot.js';

export interface ContextPoolOptions {
  size: number;
  maxQueue: number;
  reuseLimit: number;
  /**
   * Fresh contexts kept open beside the pool (SPARE_CONTEXTS): a capture whose slot last served
   * another organization takes one at once instead of waiting for a new context (issue #14).
   */
  spares?: number;
  logger: Logger;
}

export class PoolSaturatedError extends Error {}

/**
 * A fixed number of warm contexts (the concurrency limit) with a bounded queue in front of them.
 * Contexts are reused after a full reset (~0.35 CPU-s per capture instead of ~1.1 for a new one)
 * and replaced after `reuseLimit` captures, after any error, or when the browser was relaunched.
 */
export class ContextPool {
  private readonly pool: Pool<Slot>;
  /** Waiting acquisitions whose capture was given up (deadline, client gone): they hold no queue place. */
  private abandoned = 0;
  /** Fresh contexts that have served no organization yet, ready to replace another organization's. */
  private readonly spares: Slot[] = [];
  private sparesOpening = 0;
  private closed = false;

  constructor(
    private readonly manager: BrowserManager,
    private readonly options: ContextPoolOptions,
  ) {
    this.pool = genericPool.createPool<Slot>(
      {
        create: () => openSlot(manager),
        destroy: async (slot) => this.closeSlot(slot),
        validate: async (slot) => usable(slot, manager.generation) && !slot.doubtful,
      },
      {
        max: options.size,
        min: options.size,
        // The queue bound is enforced in acquire(), where given-up waiters do not count.
        testOnBorrow: true,
        autostart: false,
      },
    );
    // generic-pool retries failed creations itself; log them rather than crash.
    this.pool.on('factoryCreateError', (error) => options.logger.warn({ err: error }, 'could not open a browser context'));
  }

  /** Opens the warm contexts now, so that the first requests do not pay for them. */
  async warm(): Promise<void> {
    await this.manager.get();
    this.pool.start();
    await this.pool.ready();
    await this.refillSpares();
  }

  /** Opens spare contexts up to the configured number; failures only leave fewer spares. */
  private refillSpares(): Promise<void> {
    const wanted = (this.options.spares ?? 0) - this.spares.length - this.sparesOpening;
    const opening: Promise<void>[] = [];
    for (let i = 0; i < wanted && !this.closed; i++) {
      this.sparesOpening += 1;
      opening.push(
        openSlot(this.manager)
          .then(async (spare) => {
            if (this.closed) await this.closeSlot(spare);
            else this.spares.push(spare);
          })
          .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not open a spare browser context'))
          .finally(() => {
            this.sparesOpening -= 1;
          }),
      );
    }
    return Promise.all(opening).then(() => undefined);
  }

  /** Spares of a retired browser would keep it open: they are closed and replaced. */
  private dropStaleSpares(): void {
    const stale = this.spares.filter((spare) => !usable(spare, this.manager.generation));
    if (stale.length === 0) return;
    for (const spare of stale) {
      this.spares.splice(this.spares.indexOf(spare), 1);
      void this.closeSlot(spare);
    }
    void this.refillSpares();
  }

  /** A live spare of the current browser, if one is ready; stale ones are closed on the way. */
  private takeSpare(): Slot | undefined {
    while (this.spares.length > 0) {
      const spare = this.spares.shift()!;
      if (usable(spare, this.manager.generation)) return spare;
      void this.closeSlot(spare);
    }
    return undefined;
  }

  get waiting(): number {
    return Math.max(0, this.pool.pending - this.abandoned);
  }

  get busy(): number {
    return this.pool.borrowed;
  }

  get size(): number {
    return this.options.size;
  }

  /** Captures that may wait for a slot before new ones are refused (MAX_QUEUE). */
  get maxQueue(): number {
    return this.options.maxQueue;
  }

  /** A slot for one capture; rejects with PoolSaturatedError when the queue is full. */
  async acquire(organizationId?: string, proxyServer?: string): Promise<Slot> {
    if (this.waiting >= this.options.maxQueue && this.pool.available === 0) {
      throw new PoolSaturatedError('capture queue is full');
    }
    let pooled = await this.pool.acquire();
    // One organization per renderer: a warm context that served another organization is replaced
    // by a fresh one (separate browser contexts never share a renderer process). A spare, opened
    // in advance, takes its place in the same pool entry at once; the old context closes and a new
    // spare opens in the background, off this capture's path.
    while (pooled.organizationId !== undefined && pooled.organizationId !== organizationId) {
      const spare = this.takeSpare();
      if (spare) {
        const previous: Slot = { ...pooled };
        Object.assign(pooled, spare, { organizationId: undefined, borrowed: undefined });
        void this.closeSlot(previous);
        void this.refillSpares();
        break;
      }
      await this.pool.destroy(pooled);
      pooled = await this.pool.acquire();
    }
    pooled.organizationId = organizationId;
    if (!proxyServer) return pooled;
    // The pool slot still bounds concurrency; the capture itself runs in a dedicated proxied context.
    try {
      const dedicated = await openSlot(this.manager, proxyServer);
      dedicated.borrowed = pooled;
      return dedicated;
    } catch (error) {
      await this.pool.release(pooled);
      throw error;
    }
  }

  /**
   * Gives up a pending acquire() whose capture will not run: it stops counting as queued, and the
   * slot it is eventually granted goes straight back.
   */
  abandon(acquiring: Promise<Slot>): void {
    this.abandoned += 1;
    acquiring.then(
      (slot) => {
        this.abandoned -= 1;
        return this.release(slot);
      },
      () => {
        this.abandoned -= 1;
      },
    );
  }

  /** Returns a slot: reset and kept, or destroyed when in doubt or worn out. */
  async release(slot: Slot): Promise<void> {
    if (slot.dedicated) {
      await this.closeSlot(slot);
      if (slot.borrowed) await this.pool.release(slot.borrowed);
      return;
    }
    slot.uses += 1;
    if (!usable(slot, slot.generation)) slot.doubtful = true;
    this.dropStaleSpares();
    const keep = !slot.doubtful && slot.uses < this.options.reuseLimit && slot.generation === this.manager.generation && (await resetSlot(slot));
    if (keep) await this.pool.release(slot);
    else await this.pool.destroy(slot);
  }

  private async closeSlot(slot: Slot): Promise<void> {
    await slot.context.close().catch(() => undefined);
    // A recycled browser closes when its last context is gone.
    if (slot.generation !== this.manager.generation && slot.browser.connected && slot.browser.browserContexts().length <= 1) {
      await slot.browser.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.pool.drain().catch(() => undefined);
    await this.pool.clear().catch(() => undefined);
    await Promise.all(this.spares.splice(0).map((spare) => this.closeSlot(spare)));
  }
}
