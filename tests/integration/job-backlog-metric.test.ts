import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { CAPTURE_QUEUE } from '../../server/src/jobs/job-types.js';
import { jobBacklog } from '../../server/src/ops/job-backlog.js';
import { Metrics } from '../../server/src/ops/metrics.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The figure KEDA scales workers on (deploy/kubernetes/autoscaling.yaml): every waiting job counts,
 * including the prioritized and delayed ones BullMQ keeps out of the `wait` list (which is all a
 * KEDA `redis` list trigger would see).
 */
describe('daguerre_capture_jobs_backlog', () => {
  const prefix = `rs-test-${randomBytes(4).toString('hex')}`;
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(CAPTURE_QUEUE, { connection, prefix });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  });

  it('counts plain, prioritized and delayed jobs, which the wait list alone does not', async () => {
    await queue.add('capture', {}, { jobId: 'plain-1' });
    await queue.add('capture', {}, { jobId: 'plain-2' });
    await queue.add('capture', {}, { jobId: 'urgent', priority: 1 });
    await queue.add('capture', {}, { jobId: 'later', delay: 600_000 });
    // What KEDA's redis trigger would read: the list length.
    expect(await connection.llen(`${prefix}:${CAPTURE_QUEUE}:wait`)).toBe(2);

    expect(await jobBacklog(queue)).toEqual({ waiting: 4, active: 0 });
    const metrics = new Metrics();
    metrics.observeJobBacklog(() => jobBacklog(queue));
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^daguerre_capture_jobs_backlog 4$/m);
    expect(text).toMatch(/^daguerre_capture_jobs_waiting 4$/m);
    expect(text).toMatch(/^daguerre_capture_jobs_active 0$/m);
  });

  it('keeps /metrics answering when the queue cannot be read', async () => {
    const metrics = new Metrics();
    metrics.observeJobBacklog(() => Promise.reject(new Error('Redis is down')));
    await expect(metrics.registry.metrics()).resolves.toMatch(/daguerre_capture_jobs_backlog 0/);
  });
});
