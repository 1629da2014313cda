import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { monitorApi } from '../helpers/monitor-api.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Run {
  runId: string;
  status: 'running' | 'succeeded' | 'failed';
  credits: number;
  targetStatus: number | null;
  error: { code: string; message: string } | null;
}

/** What a review found: the charge of a run is settled with its record, credentials are not kept, a user's pause is the user's. */
describe('monitors: what a run is charged, what a monitor keeps', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let call: ReturnType<typeof monitorApi>;
  const prefix = `rs-test-monc-${randomBytes(4).toString('hex')}`;
  let hits = 0;

  beforeAll(async () => {
    fixtures = new FixtureServer()
      // A final status outside 2xx that is no error: Chromium shows the page, failOnHttpError does not refuse it.
      .route('/choices', (_req, res) => {
        hits += 1;
        res.writeHead(300, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<h1>Pick one</h1><p>visit ${hits}</p>`);
      })
      .page('/still', '<h1>Still</h1><p>Nothing changes here.</p>');
    await fixtures.start();
    service = await startTestService({
      credits: 1_000,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        MONITOR_MIN_INTERVAL_SECONDS: '1',
        MONITOR_RECONCILE_INTERVAL_MS: '500',
        RATE_LIMIT_MAX: '1000',
      },
    });
    call = monitorApi(service.url, service.apiKey);
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('records a run whose target ends outside 2xx as failed, and charges nothing for it', async () => {
    const before = (await service.client.usage()).credits.usedThisPeriod;
    const created = await call<{ data: { monitorId: string } }>('POST', '/monitors', {
      url: `${fixtures.url}/choices`,
      intervalSeconds: 1,
      viewportWidth: 320,
      viewportHeight: 240,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const monitorId = created.body.data.monitorId;
    const runs = await until(
      async () => {
        const answer = await call<{ data: { runs: Run[] } }>('GET', `/monitors/${monitorId}/runs`);
        const finished = answer.body.data.runs.filter((run) => run.status !== 'running');
        return finished.length >= 2 ? finished : undefined;
      },
      60_000,
      'two finished runs',
    );
    expect((await call('PATCH', `/monitors/${monitorId}`, { paused: true })).status).toBe(200);
    for (const run of runs)
      expect(run).toMatchObject({ status: 'failed', credits: 0, targetStatus: 300, error: { code: 'TARGET_HTTP_ERROR' } });
    // Runs that ended before the pause are all failed: nothing of theirs is charged, and no reservation is left open.
    await until(
      async () =>
        (await service.runtime.db.knex('capture_ledger').where('status', 'reserved').count({ n: '*' }))[0]!.n == 0 ? true : undefined,
      30_000,
      'no open reservation',
    );
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(before);
    const logged = await service.client.listCaptures({ status: 'failed' });
    expect(logged.captures.filter((c) => c.kind === 'monitor').length).toBeGreaterThanOrEqual(2);
    expect((await call('DELETE', `/monitors/${monitorId}`)).status).toBe(204);
  });

  it('refuses credentials in url or proxyUrl (a monitor keeps its options and shows them back), creating nothing', async () => {
    const count = async () => Number((await service.runtime.db.knex('monitors').count({ n: '*' }))[0]!.n);
    const before = await count();
    const secret = `pw-${randomBytes(4).toString('hex')}`;
    for (const [field, body] of [
      ['url', { url: `http://user:${secret}@${new URL(fixtures.url).host}/still` }],
      ['proxyUrl', { url: `${fixtures.url}/still`, proxyUrl: `http://user:${secret}@proxy.example.com:8080` }],
    ] as const) {
      const answer = await call<{ error: { code: string; details: { field: string }[] } }>('POST', '/monitors', {
        intervalSeconds: 60,
        ...body,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error.details.map((d) => d.field)).toEqual([field]);
      expect(JSON.stringify(answer.body)).not.toContain(secret);
    }
    expect(await count()).toBe(before);
  });

  it('keeps a monitor paused by its user when it had been paused for credits: credits returning do not resume it', async () => {
    const created = await call<{ data: { monitorId: string } }>('POST', '/monitors', {
      url: `${fixtures.url}/still`,
      intervalSeconds: 3600,
      paused: true,
    });
    const monitorId = created.body.data.monitorId;
    await service.runtime.db.knex('monitors').where('id', monitorId).update({ paused_reason: 'credits' });
    const paused = await call<{ data: { paused: boolean; pausedReason: string } }>('PATCH', `/monitors/${monitorId}`, { paused: true });
    expect(paused.body.data).toMatchObject({ paused: true, pausedReason: 'user' });
  });
});
