import type { Slot } from './pool-slot.js';

let releases = 0;

/** Marks `slot` as the most recently used: the idle list is kept in this order (context-pool.ts). */
export function stampRelease(slot: Slot): void {
  releases += 1;
  slot.releasedAt = releases;
}

/**
 * Puts `slot` back among the idle contexts at its place by last release, least recently used
 * first. Resets and parked-page leaves finish in any order; inserting by their finish (or by an
 * index taken before others left the list) would make eviction close whichever context settled
 * first rather than the least recently used one.
 */
export function returnToIdle(idle: Slot[], slot: Slot): void {
  const stamp = slot.releasedAt ?? 0;
  const later = idle.findIndex((other) => (other.releasedAt ?? 0) > stamp);
  idle.splice(later === -1 ? idle.length : later, 0, slot);
}
