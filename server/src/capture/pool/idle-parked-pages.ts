import { returnToIdle } from './idle-order.js';
import { leave } from './parked-page.js';
import type { Slot } from './pool-slot.js';
import { ignoreBecause } from '../../ignore-error.js';

/** What leaving a parked page needs of the context pool (context-pool.ts). */
export interface IdleContexts {
  /** Warm contexts waiting for their organization's next capture. */
  idle: Slot[];
  /** Tracks work on a context taken out of `idle` (its organization's next capture waits for it). */
  track(slot: Slot, work: Promise<void>): Promise<void>;
  usable(slot: Slot): boolean;
  close(slot: Slot): Promise<void>;
  closed(): boolean;
}

/**
 * A parked page (parked-page.ts) keeps its frozen document while captures render: the next
 * capture's navigation replaces it, which costs less CPU than unloading it first. Once nothing
 * renders, or when its organization has not come back within a second, the frozen document is
 * replaced with about:blank: that costs idle CPU only, the memory of the page goes back, and the
 * organization's next capture does not unload it on its answer's path.
 */
export function leaveIfParked(slot: Slot, pool: IdleContexts): void {
  const index = pool.idle.indexOf(slot);
  if (index === -1 || !slot.parked || pool.closed()) return;
  pool.idle.splice(index, 1);
  let kept = false;
  const left = leave(slot).then(() => {
    kept = pool.usable(slot) && !pool.closed();
    // Back among the idle ones, in its place by last use, before a capture waiting for it looks.
    if (kept) returnToIdle(pool.idle, slot);
  }, ignoreBecause('a page that could not leave is not kept: it is closed below'));
  // Never rejects: `left` ends its own failure above and the pool's close ignores a failed one.
  void pool.track(slot, left).then(async () => {
    if (!kept) await pool.close(slot);
  });
}
