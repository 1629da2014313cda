import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { monitorApi, WebhookInbox } from '../helpers/monitor-api.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

interface Run {
  runId: string;
  status: string;
  startedAt: string;
  finishedAt: string | null;
}

/**
 * The schedule lives in the database (MariaDB here): two processes share the monitors without ever
 * running one twice at once, the schedule outlives every process, and a Redis restarted empty gets
 * it back from the database.
 */
describe('monitors across processes, restarts and a Redis restarted empty (MariaDB)', () => {
  let redis: PrivateRedis;
  let database: TestDatabase;
  let fixtures: FixtureServer;
  const services: TestService[] = [];
  const inbox = new WebhookInbox();
  let inFlight = 0;
  let maxInFlight = 0;
  let apiKey = '';
  const env = () => ({
    REDIS_URL: redis.url,
    JOB_QUEUE_PREFIX: `rs-test-mon-restart-${randomBytes(3).toString('hex')}`,
    MONITOR_MIN_INTERVAL_SECONDS: '1',
    MONITOR_RECONCILE_INTERVAL_MS: '500',
    MONITOR_WORKERS: '2',
    MONITOR_MAX_PER_ORGANIZATION: '2',
    WEBHOOK_RETRY_BASE_MS: '200',
    RATE_LIMIT_MAX: '1000',
    JOB_LOCK_MS: '4000',
  });
  let prefixEnv: ReturnType<typeof env>;
  const start = async () => {
    const service = await startTestService({ databaseUrl: database.url, env: prefixEnv });
    services.push(service);
    return service;
  };
  const runsOf = async (service: TestService, monitorId: string): Promise<Run[]> =>
    (await monitorApi(service.url, apiKey)<{ data: { runs: Run[] } }>('GET', `/monitors/${monitorId}/runs?limit=100`)).body.data.runs;
  const finishedAfter = (service: TestService, monitorId: string, since: number, count: number) =>
    until(
      async () => {
        const runs = (await runsOf(service, monitorId)).filter((run) => run.status !== 'running' && Date.parse(run.startedAt) > since);
        return runs.length >= count ? runs.reverse() : undefined;
      },
      45_000,
      `${count} runs of ${monitorId} after ${new Date(since).toISOString()}`,
      150,
    );

  beforeAll(async () => {
    redis = await new PrivateRedis().start();
    database = await createTestDatabase('mysql');
    fixtures = new FixtureServer().route('/hook', inbox.handler).route('/held', (_req, res) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<h1>Held</h1><p>Longer than the interval.</p>');
      }, 1_800);
    });
    await fixtures.start();
    prefixEnv = env();
  });
  afterAll(async () => {
    for (const service of services) await service.runtime.stop().catch(() => undefined);
    await database?.drop();
    await fixtures?.stop();
    await redis?.stop();
  });

  it('two processes on one database and one Redis: each monitor runs once at a time', async () => {
    const [a, b] = [await start(), await start()];
    const key = await a.runtime.apiKeys.create({ organizationId: a.organizationId, name: 'restart' });
    apiKey = key.key;
    inbox.trust(key.signingSecret);
    const created = await monitorApi(a.url, apiKey)<{ data: { monitorId: string } }>('POST', '/monitors', {
      url: `${fixtures.url}/held`,
      intervalSeconds: 1,
      webhookUrl: `${fixtures.url}/hook`,
      viewportWidth: 320,
      viewportHeight: 240,
      threshold: 0,
    });
    expect(created.status).toBe(201);
    const monitorId = created.body.data.monitorId;
    const runs = await finishedAfter(b, monitorId, 0, 4);
    expect(maxInFlight).toBe(1);
    for (let i = 1; i < runs.length; i++)
      expect(Date.parse(runs[i]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(runs[i - 1]!.finishedAt!));
    expect(inbox.unverified).toEqual([]);
  }, 90_000);

  it('every process restarted: the schedule comes back from the database', async () => {
    const monitorId = String((await services[0]!.runtime.db.knex('monitors').first('id')).id);
    // runtime.stop only: the database is the suite's and outlives the processes.
    for (const service of services.splice(0)) await service.runtime.stop();
    const stoppedAt = Date.now();
    const c = await start();
    await finishedAfter(c, monitorId, stoppedAt, 2);
  }, 90_000);

  it('Redis killed and started again empty: the reconcile rebuilds the schedule from the database', async () => {
    const service = services[0]!;
    const monitorId = String((await service.runtime.db.knex('monitors').first('id')).id);
    await redis.kill();
    await redis.start();
    const restartedAt = Date.now();
    await until(
      async () => (await service.runtime.monitors!.schedule.queue.getJobScheduler(monitorId)) ?? undefined,
      30_000,
      'the scheduler rebuilt in the new Redis',
    );
    await finishedAfter(service, monitorId, restartedAt, 2);
    expect(maxInFlight).toBe(1);
  }, 90_000);
});
