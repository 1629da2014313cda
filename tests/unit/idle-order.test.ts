import { describe, expect, it } from 'vitest';
import { returnToIdle, stampRelease } from '../../server/src/capture/pool/idle-order.js';
import type { Slot } from '../../server/src/capture/pool/pool-slot.js';

/** Only the fields idle-order.ts reads: a name to tell slots apart and their release stamp. */
const slotNamed = (name: string) => ({ name }) as unknown as Slot & { name: string };
const names = (idle: Slot[]) => idle.map((slot) => (slot as Slot & { name: string }).name);

describe('the idle list, least recently used first', () => {
  it('keeps release order whatever order the resets finish in', () => {
    const [a, b, c] = ['a', 'b', 'c'].map(slotNamed);
    for (const slot of [a!, b!, c!]) stampRelease(slot);
    const idle: Slot[] = [];
    for (const slot of [c!, a!, b!]) returnToIdle(idle, slot);
    expect(names(idle)).toEqual(['a', 'b', 'c']);
  });

  it('puts back contexts that all left their parked pages at once, in any order, where they were', () => {
    const [b, c, a] = ['b', 'c', 'a'].map(slotNamed);
    for (const slot of [b!, c!, a!]) stampRelease(slot);
    const idle: Slot[] = [b!, c!, a!];
    // All three leave (taken out), then come back as their pages finish: a, then b, then c.
    idle.splice(0);
    for (const slot of [a!, b!, c!]) returnToIdle(idle, slot);
    expect(names(idle)).toEqual(['b', 'c', 'a']);
  });

  it('puts a context released again after the others at the end', () => {
    const [a, b] = ['a', 'b'].map(slotNamed);
    stampRelease(a!);
    stampRelease(b!);
    const idle: Slot[] = [a!, b!];
    idle.splice(0, 1);
    stampRelease(a!);
    returnToIdle(idle, a!);
    expect(names(idle)).toEqual(['b', 'a']);
  });
});
