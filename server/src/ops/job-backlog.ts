import type { Queue } from 'bullmq';
import type { JobBacklog } from './metrics.js';

/**
 * The async capture backlog as KEDA should see it (docs/async-jobs.md). BullMQ keeps jobs with a
 * priority in the `prioritized` sorted set and delayed ones in `delayed`, not in the `wait` list,
 * so a KEDA `redis` list trigger would read 0 for them; counting every waiting state here does not.
 */
export async function jobBacklog(queue: Queue): Promise<JobBacklog> {
  const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'waiting-children', 'active');
  const waiting = (counts.wait ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0) + (counts['waiting-children'] ?? 0);
  return { waiting, active: counts.active ?? 0 };
}
