import { describe, expect, it } from 'vitest';
import { CaptureTurns, PoolSaturatedError } from '../../server/src/capture/pool/capture-turns.js';

describe('CaptureTurns: at most `size` at once, then a bounded queue in arrival order', () => {
  it('grants up to size, queues up to maxQueue, refuses the next', async () => {
    const turns = new CaptureTurns(1, 1, () => undefined);
    const first = turns.run(async () => 'first');
    const second = turns.run(async () => 'second');
    await expect(turns.run(async () => 'third')).rejects.toBeInstanceOf(PoolSaturatedError);
    expect(await first).toBe('first');
    expect(turns.busy).toBe(1);
    expect(turns.waiting).toBe(1);
    turns.end();
    expect(await second).toBe('second');
    expect(turns.busy).toBe(1);
    expect(turns.waiting).toBe(0);
  });

  it('passes an ended turn to the earliest waiter, never to a newcomer', async () => {
    const turns = new CaptureTurns(1, 5, () => undefined);
    const order: string[] = [];
    await turns.run(async () => order.push('a'));
    const b = turns.run(async () => order.push('b'));
    const c = turns.run(async () => order.push('c'));
    turns.end();
    await b;
    turns.end();
    await c;
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('a run that fails gives its turn back; the last turn ended calls onIdle once', async () => {
    let idle = 0;
    const turns = new CaptureTurns(1, 1, () => (idle += 1));
    await expect(
      turns.run(async () => {
        throw new Error('no context');
      }),
    ).rejects.toThrow('no context');
    expect(turns.busy).toBe(0);
    expect(idle).toBe(1);
    await turns.run(async () => undefined);
    turns.end();
    expect(idle).toBe(2);
  });

  it('leave() takes a waiting run out of the queue and rejects it; a granted run is not affected', async () => {
    const turns = new CaptureTurns(1, 2, () => undefined);
    const granted = turns.run(async () => 'granted');
    const waiting = turns.run(async () => 'waiting');
    turns.leave(waiting);
    await expect(waiting).rejects.toThrow('gave up its place');
    expect(turns.waiting).toBe(0);
    turns.leave(granted);
    expect(await granted).toBe('granted');
    expect(turns.busy).toBe(1);
  });
});
