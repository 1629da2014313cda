import type { Logger } from 'pino';
import type { BrowserManager } from '../browser/browser-manager.js';
import { openSlot, resetSlot, usable, type Slot } from './pool-slot.js';
import { leaveIfParked, type IdleContexts } from './idle-parked-pages.js';
import { returnToIdle, stampRelease } from './idle-order.js';
import { PendingResets } from './pending-resets.js';
import { SpareContexts } from './spare-contexts.js';
import { CaptureTurns } from './capture-turns.js';
import { keyOf, NO_ORGANIZATION, WarmContextLimit } from './warm-context-limit.js';
import { ignoreBecause } from '../../ignore-error.js';

export type { Slot } from './pool-slot.js';

export interface ContextPoolOptions {
  /** Captures rendering at once (MAX_CONCURRENCY). */
  size: number;
  maxQueue: number;
  reuseLimit: number;
  /** Captures a context's renderer process serves before the reset gives it a new one (RENDERER_REUSE_LIMIT). */
  rendererReuseLimit?: number;
  /** Captures between two full garbage collections of a kept renderer, run by the reset (RENDERER_GC_EVERY). */
  rendererGcEvery?: number;
  /**
   * Fresh contexts kept open for organizations that have no warm context of their own
   * (SPARE_CONTEXTS): such a capture takes one at once instead of waiting for a new context.
   */
  spares?: number;
  /**
   * Warm contexts kept for the organizations that used them last (WARM_CONTEXTS), busy ones
   * included; past it the least recently used idle one is closed.
   */
  warmContexts?: number;
  logger: Logger;
}

/** A parked page not taken again within this long gets about:blank even while captures render. */
const PARKED_IDLE_MS = 1_000;

/**
 * warm() opens a spare a render slot, so that a first burst of organizations pays for no context;
 * once no capture has rendered for this long after one, or at all this long after the start, the
 * spares past SPARE_CONTEXTS are closed: each holds an idle renderer (about 20 MiB, docs/scaling.md
 * "Memory of an idle worker"), and an organization's own warm context is not among them.
 */
export const EXTRA_SPARES_IDLE_MS = 1_000;
export const EXTRA_SPARES_UNUSED_MS = 30_000;

/**
 * Warm browser contexts, each serving one organization only (docs/security.md), with a concurrency
 * limit and a bounded queue in front of them.
 *
 * A context is reused for its own organization after a reset that keeps its renderer process
 * (pool-slot.ts), so a warm capture costs what a capture on a kept puppeteer page costs (~0.35
 * CPU-s, against ~1.1 for a new context and renderer). Contexts are therefore kept per
 * organization, up to `warmContexts`, rather than per slot: with a few organizations taking turns,
 * each finds its own context waiting. An organization with none takes a spare, opened in advance,
 * and a new spare opens in the background. A kept renderer's garbage is collected every
 * `rendererGcEvery` captures (it grows as it serves) and the renderer is renewed every
 * `rendererReuseLimit`; contexts are replaced after `reuseLimit` captures, after any error, or when
 * the browser was relaunched.
 */
export class ContextPool {
  /** Captures holding a context now, and the queue of those waiting for one. */
  private readonly turns: CaptureTurns;
  /** Warm contexts of organizations, idle, least recently used first. */
  private readonly idle: Slot[] = [];
  /** Contexts being reset after a capture, by organization: its next capture waits for one rather than take a spare. */
  private readonly resetting = new PendingResets();
  /** The limit of warm contexts, with the count of those serving captures now (warm-context-limit.ts). */
  private readonly warmContexts: WarmContextLimit;
  private closed = false;
  private readonly spares: SpareContexts;
  private readonly idleContexts: IdleContexts;

  constructor(
    private readonly manager: BrowserManager,
    private readonly options: ContextPoolOptions,
  ) {
    this.turns = new CaptureTurns(options.size, options.maxQueue, () => {
      setImmediate(() => this.leaveParkedWhenIdle());
      setTimeout(() => this.trimSparesWhenIdle(), EXTRA_SPARES_IDLE_MS).unref();
    });
    this.spares = new SpareContexts(
      () => openSlot(manager),
      (slot) => this.closeSlot(slot),
      () => this.closed,
      options.logger,
    );
    this.warmContexts = new WarmContextLimit(this.idle, this.resetting, options, (slot) => this.closeSlot(slot));
    this.idleContexts = {
      idle: this.idle,
      track: (slot, work) => this.resetting.track(keyOf(slot), work),
      usable: (slot) => usable(slot, this.manager.generation),
      close: (slot) => this.closeSlot(slot),
      closed: () => this.closed,
    };
  }

  private get spareTarget(): number {
    return this.options.spares ?? 1;
  }

  /** Opens the first contexts now, so that the first requests do not pay for them. */
  async warm(): Promise<void> {
    await this.manager.get();
    await this.spares.refill(Math.max(this.spareTarget, this.options.size));
    setTimeout(() => this.trimSparesWhenIdle(), EXTRA_SPARES_UNUSED_MS).unref();
  }

  /** Fresh contexts ready now. */
  get spareCount(): number {
    return this.spares.ready.length;
  }

  /** Contexts being reset after a capture or leaving their parked page; each is back among the idle ones once this is 0. */
  get settling(): number {
    return this.resetting.count();
  }

  get waiting(): number {
    return this.turns.waiting;
  }

  get busy(): number {
    return this.turns.busy;
  }

  get size(): number {
    return this.options.size;
  }

  /** Captures that may wait for a slot before new ones are refused (MAX_QUEUE). */
  get maxQueue(): number {
    return this.options.maxQueue;
  }

  /** A context for one capture of `organizationId`; rejects with PoolSaturatedError when the queue is full. */
  acquire(organizationId?: string, proxyServer?: string): Promise<Slot> {
    return this.turns.run(async () => {
      // The pool's concurrency still bounds a proxied capture; it runs in a dedicated context.
      if (proxyServer) return await openSlot(this.manager, proxyServer);
      const key = organizationId ?? NO_ORGANIZATION;
      const slot = (await this.warmSlotOf(key)) ?? (await this.freshSlot());
      slot.organizationId = organizationId;
      this.warmContexts.hold(key);
      this.warmContexts.evictBeyondLimit();
      return slot;
    });
  }

  /** Nothing renders: spares past SPARE_CONTEXTS are closed (EXTRA_SPARES_IDLE_MS). */
  private trimSparesWhenIdle(): void {
    if (this.turns.busy === 0 && !this.closed) this.spares.trim(this.spareTarget);
  }

  /** The organization's own warm context: an idle one, or one finishing its reset. */
  private async warmSlotOf(key: string): Promise<Slot | undefined> {
    for (;;) {
      let index = this.idle.length - 1;
      while (index >= 0 && keyOf(this.idle[index]!) !== key) index -= 1;
      if (index >= 0) {
        const [slot] = this.idle.splice(index, 1);
        if (usable(slot!, this.manager.generation)) return slot;
        void this.closeSlot(slot!);
        continue;
      }
      const pending = this.resetting.of(key);
      if (!pending || pending.size === 0) return undefined;
      // A reset takes a few ms; a new context costs a new renderer process.
      await Promise.race(pending);
    }
  }

  /** A spare context (or a new one when none is ready); the number of warm contexts stays bounded. */
  private async freshSlot(): Promise<Slot> {
    let slot: Slot | undefined;
    for (let attempt = 0; !slot && attempt < 2; attempt++) {
      let spare = await this.spares.take();
      while (!slot && spare) {
        if (usable(spare, this.manager.generation)) slot = spare;
        else {
          void this.closeSlot(spare);
          spare = this.spares.ready.shift();
        }
      }
    }
    slot ??= await openSlot(this.manager);
    // refill logs a spare that fails to open and never rejects (spare-contexts.ts).
    void this.spares.refill(this.spareTarget);
    return slot;
  }

  /**
   * Gives up an acquire() whose capture will not run: still queued, it leaves the queue at once;
   * already granted, the context it gets goes straight back.
   */
  abandon(acquiring: Promise<Slot>): void {
    // Not granted yet: out of the queue. (Granted already, it is opening its context: released below.)
    this.turns.leave(acquiring);
    // release() never rejects (a reset that fails closes the slot).
    acquiring.then((slot) => this.release(slot), ignoreBecause('an acquire that failed holds no slot to give back'));
  }

  /** Contexts of a retired browser would keep it open: closed now, not when their organization returns. */
  private dropStale(): void {
    for (const list of [this.idle, this.spares.ready]) {
      const stale = list.filter((slot) => !usable(slot, this.manager.generation));
      for (const slot of stale) {
        list.splice(list.indexOf(slot), 1);
        void this.closeSlot(slot);
      }
    }
  }

  /** Returns a context: reset and kept for its organization, or closed when in doubt or worn out. */
  async release(slot: Slot): Promise<void> {
    this.turns.end();
    this.dropStale();
    if (slot.dedicated) {
      await this.closeSlot(slot);
      return;
    }
    const key = keyOf(slot);
    this.warmContexts.giveBack(key);
    slot.uses += 1;
    stampRelease(slot);
    if (!usable(slot, slot.generation)) slot.doubtful = true;
    const worthKeeping =
      !this.closed && !slot.doubtful && slot.uses < this.options.reuseLimit && slot.generation === this.manager.generation;
    if (!worthKeeping) {
      await this.closeSlot(slot);
      return;
    }
    const renewRenderer = slot.heavy === true || slot.uses % (this.options.rendererReuseLimit ?? 100) === 0;
    const collectGarbage = !renewRenderer && slot.uses % (this.options.rendererGcEvery ?? 10) === 0;
    slot.heavy = false;
    let kept = false;
    await this.resetting.track(
      key,
      resetSlot(slot, renewRenderer ? 'renew' : collectGarbage ? 'collect' : 'keep').then((ok) => {
        kept = ok && !this.closed && usable(slot, this.manager.generation);
        // Back among the idle ones before the organization's waiting capture looks (it wakes when this settles).
        if (kept) returnToIdle(this.idle, slot);
      }),
    );
    if (kept) {
      this.warmContexts.evictBeyondLimit();
      setImmediate(() => this.leaveParkedWhenIdle());
      // Not taken again soon (an organization that is not capturing now): its frozen page's memory
      // goes back even while other captures render.
      setTimeout(() => leaveIfParked(slot, this.idleContexts), PARKED_IDLE_MS).unref();
    } else {
      await this.closeSlot(slot);
    }
  }

  /** Once nothing renders, idle parked pages get about:blank (idle-parked-pages.ts). */
  private leaveParkedWhenIdle(): void {
    if (this.turns.busy > 0) return;
    for (const slot of this.idle.filter((idle) => idle.parked)) leaveIfParked(slot, this.idleContexts);
  }

  /** Never rejects (both closes ignore their errors): callers that do not wait for it say `void`. */
  private async closeSlot(slot: Slot): Promise<void> {
    await slot.context.close().catch(ignoreBecause('the browser may have closed the context already'));
    // A recycled browser closes when its last context is gone.
    if (slot.generation !== this.manager.generation && slot.browser.connected && slot.browser.browserContexts().length <= 1) {
      await slot.browser.close().catch(ignoreBecause('the browser may have exited already'));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.idle.splice(0), ...this.spares.ready.splice(0)].map((slot) => this.closeSlot(slot)));
  }
}
