import type { PendingResets } from './pending-resets.js';
import type { Slot } from './pool-slot.js';

/** The key of captures made without an organization (direct use of the renderer). */
export const NO_ORGANIZATION = '';

/** The organization a context serves, as the pool counts its contexts. */
export const keyOf = (slot: Slot) => slot.organizationId ?? NO_ORGANIZATION;

/** The pool's numbers the limit of warm contexts is taken from (context-pool.ts ContextPoolOptions). */
export interface WarmContextSettings {
  /** Captures rendering at once (MAX_CONCURRENCY). */
  size: number;
  /** WARM_CONTEXTS; absent, twice `size`. */
  warmContexts?: number;
}

/**
 * The limit of warm contexts (WARM_CONTEXTS), busy ones included: counts the contexts of each
 * organization (idle, being reset, serving its captures) and closes idle ones past the limit.
 */
export class WarmContextLimit {
  /** Contexts held by captures now, by organization. */
  private readonly serving = new Map<string, number>();

  constructor(
    /** The pool's idle contexts, least recently used first (idle-order.ts). */
    private readonly idle: Slot[],
    private readonly resetting: PendingResets,
    private readonly settings: WarmContextSettings,
    /** The pool's closeSlot, which never rejects. */
    private readonly close: (slot: Slot) => Promise<void>,
  ) {}

  private get limit(): number {
    return Math.max(this.settings.warmContexts ?? 2 * this.settings.size, this.settings.size);
  }

  /** A capture of `key` holds one of the contexts now. */
  hold(key: string): void {
    this.serving.set(key, (this.serving.get(key) ?? 0) + 1);
  }

  /** A capture of `key` gave its context back. */
  giveBack(key: string): void {
    const serving = (this.serving.get(key) ?? 1) - 1;
    if (serving > 0) this.serving.set(key, serving);
    else this.serving.delete(key);
  }

  /** Contexts an organization has now: idle, being reset, or serving its captures. */
  private contextsOf(key: string): number {
    return this.idle.filter((slot) => keyOf(slot) === key).length + this.resetting.count(key) + (this.serving.get(key) ?? 0);
  }

  /**
   * Closes idle contexts while more are open than WARM_CONTEXTS allows: first the least recently
   * used of an organization that has more than one (what a burst of its captures left behind), then
   * the least recently used. Plain LRU closed the context of whichever organization came next when
   * a few took turns after one of them had two (each capture then opened a context, ~1.1 CPU-s).
   */
  evictBeyondLimit(): void {
    // Contexts, not turns: a capture whose turn came counts once it holds its context, so the
    // context it is waiting for (being reset) is never closed under it.
    const resetting = this.resetting.count();
    const serving = [...this.serving.values()].reduce((sum, n) => sum + n, 0);
    while (this.idle.length > 0 && this.idle.length + resetting + serving > this.limit) {
      const surplus = this.idle.findIndex((slot) => this.contextsOf(keyOf(slot)) > 1);
      const [victim] = this.idle.splice(Math.max(surplus, 0), 1);
      void this.close(victim!);
    }
  }
}
