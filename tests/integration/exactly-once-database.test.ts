import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaptureJobData } from '../../client/src/index.js';
import { PrivateMariaDb } from '../helpers/private-mariadb.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PAGE = '<body style="margin:0;background:rgb(40,160,110)">db</body>';

/** Charged exactly once (docs/async-jobs.md) with the database as the fault: a MariaDB of the test's own SIGKILLed while jobs render. */
describe('exactly once: MariaDB SIGKILLed with async jobs running', () => {
  const prefix = `rs-test-${randomBytes(4).toString('hex')}`;
  let mariadb: PrivateMariaDb;
  let service: TestService;

  beforeAll(async () => {
    mariadb = await new PrivateMariaDb().init();
    await mariadb.start();
    const url = await mariadb.createDatabase('daguerre_jobs_outage');
    service = await startTestService({
      databaseUrl: url,
      credits: 20,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        CAPTURE_WORKERS: '2',
        MAX_CONCURRENCY: '2',
        JOB_LOCK_MS: '3000',
        RATE_LIMIT_MAX: '1000',
        CREDIT_SWEEP_INTERVAL_MS: '1000',
      },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await mariadb?.destroy();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  const headers = () => ({ 'x-api-key': service.apiKey });
  const view = async (jobId: string) =>
    ((await (await service.get(`/captures/${jobId}`, { headers: headers() })).json()) as { data: CaptureJobData }).data;

  it('every job ends once after the database comes back; credits used = files fetchable; a failed job charged nothing', async () => {
    const jobs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await service.get('/captures', {
        method: 'POST',
        headers: { ...headers(), 'content-type': 'application/json' },
        body: JSON.stringify({ html: PAGE, delay: 2500, viewportWidth: 140 + i, viewportHeight: 100 }),
      });
      expect(response.status).toBe(202);
      jobs.push(((await response.json()) as { data: { jobId: string } }).data.jobId);
    }
    await until(
      async () => ((await Promise.all(jobs.map(view))).some((job) => job.status === 'active') ? true : undefined),
      60_000,
      'a job to start',
    );
    await mariadb.kill();
    // The outage (the fault itself): the renders under way reach their commit while the database is gone.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await mariadb.start();

    const views = await until(
      async () => {
        const all = await Promise.all(jobs.map(view));
        return all.every((job) => job.status === 'succeeded' || job.status === 'failed') ? all : undefined;
      },
      180_000,
      'every job to end',
    );
    let succeeded = 0;
    for (const job of views) {
      if (job.status === 'succeeded') {
        succeeded += 1;
        expect(job.creditsCharged).toBe(1);
        const file = await service.get(`/captures/${job.jobId}/file`, { headers: headers() });
        expect(file.status).toBe(200);
        expect((await file.arrayBuffer()).byteLength).toBe(job.result!.fileSize);
      } else {
        expect(job.creditsCharged).toBe(0);
        expect(job.error!.message).toMatch(/nothing was charged/);
      }
    }
    const charges = (await service.runtime.db.knex('job_charges').whereIn('job_id', jobs).select('job_id')) as Array<{ job_id: string }>;
    expect(charges.map((row) => row.job_id).sort()).toEqual(
      views
        .filter((job) => job.status === 'succeeded')
        .map((job) => job.jobId)
        .sort(),
    );
    // Reservations of attempts cut off by the outage are released (at the take-over or by the sweeper): used and remaining settle.
    const usage = await until(
      async () => {
        const report = (await service.client.usage()).credits;
        return report.remaining + report.usedThisPeriod === 20 ? report : undefined;
      },
      120_000,
      'every reservation to be settled',
    );
    expect(usage.usedThisPeriod).toBe(succeeded);
    console.log(
      `[exactly-once-database] MariaDB SIGKILL for 4 s: ${succeeded} succeeded, ${views.length - succeeded} failed, credits used ${usage.usedThisPeriod}`,
    );
  }, 300_000);
});
