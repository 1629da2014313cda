/** The fair queue's numbering: where a new job of an organization goes among the queued ones (BullMQ priorities). */
import type { Knex } from 'knex';
import { numberOrNull } from './database.js';

/** BullMQ's highest priority number (2^21 - 1): past it the queue degrades to arrival order. */
export const MAX_PRIORITY = 2_097_151;
/** Where numbering starts in an empty queue: up to this many newcomers can each go ahead of the one before. */
export const EMPTY_QUEUE_PRIORITY = 1_000;

/**
 * The priority a new job of the organization is queued with; `planWeight` is its plan's fair-share
 * weight (jobs of the organization per round, default 1). See JobRepository.create for the reasoning.
 */
export async function fairQueuePriority(knex: Knex, organizationId: string, planWeight?: number): Promise<number> {
  const [lowest, own] = await Promise.all([
    knex('capture_jobs').where('status', 'queued').min({ p: 'priority' }).first(),
    knex('capture_jobs').where({ status: 'queued', organization_id: organizationId }).max({ p: 'priority' }).first(),
  ]);
  const floor = numberOrNull(lowest?.p);
  const ownLast = numberOrNull(own?.p);
  // A plan of weight w places w jobs on each number: w turns per round.
  const weight = Math.max(1, Math.floor(planWeight ?? 1));
  let step = 1;
  if (ownLast !== null && weight > 1) {
    const atLast = await knex('capture_jobs')
      .where({ status: 'queued', organization_id: organizationId, priority: ownLast })
      .count({ n: '*' })
      .first();
    if (Number(atLast?.n ?? 0) < weight) step = 0;
  }
  // An organization with nothing queued goes just ahead of the lowest number: its job is the next one
  // taken. An empty queue starts at EMPTY_QUEUE_PRIORITY, which leaves room below for newcomers.
  return floor === null
    ? EMPTY_QUEUE_PRIORITY
    : Math.min(MAX_PRIORITY, ownLast === null ? Math.max(1, floor - 1) : Math.max(floor, ownLast + step));
}
