/**
 * Preemption of the captures an organization holds above its share (docs/render-slots.md): the fair
 * scheduler (fair-scheduler.ts) lets an organization use free slots past its share, and takes them
 * back here when organizations below their share arrive and no slot is free.
 */

/** One running capture: aborting its controller preempts it. */
export interface Running {
  controller: AbortController;
  preempted: boolean;
}

/** What choosing the captures to preempt needs of the fair scheduler. */
export interface PreemptionState {
  /** The queue of each waiting organization. */
  queues: ReadonlyMap<string, readonly unknown[]>;
  /** The running captures of each organization, oldest first. */
  runningByOrg: ReadonlyMap<string, readonly Running[]>;
  /** Slots free now. */
  free: number;
  /** Slots the organization may hold while others below their share wait. */
  limitOf(organizationId: string): number;
}

/** Running captures not already preempted. */
export function activeCount(runningByOrg: PreemptionState['runningByOrg'], organizationId: string): number {
  return (runningByOrg.get(organizationId) ?? []).filter((running) => !running.preempted).length;
}

/**
 * When organizations below their share wait with no slot free, the newest captures of the
 * organizations furthest above their share are preempted, one per slot those waiters could use.
 */
export function preemptForWaiters(state: PreemptionState): void {
  const { queues, runningByOrg, limitOf } = state;
  let wanted = 0;
  for (const [organizationId, queue] of queues) {
    wanted += Math.max(0, Math.min(queue.length, limitOf(organizationId) - activeCount(runningByOrg, organizationId)));
  }
  let pending = 0;
  for (const list of runningByOrg.values()) pending += list.filter((running) => running.preempted).length;
  let needed = wanted - pending - state.free;
  while (needed > 0) {
    let victim: string | undefined;
    let excess = 0;
    for (const organizationId of runningByOrg.keys()) {
      const over = activeCount(runningByOrg, organizationId) - limitOf(organizationId);
      if (over > excess) [victim, excess] = [organizationId, over];
    }
    if (!victim) return;
    const newest = [...runningByOrg.get(victim)!].reverse().find((running) => !running.preempted)!;
    newest.preempted = true;
    newest.controller.abort();
    needed -= 1;
  }
}
