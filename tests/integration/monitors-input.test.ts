import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { monitorApi } from '../helpers/monitor-api.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

type ErrorBody = { success: false; error: { code: string; message: string; details?: Array<{ field: string }> | Record<string, unknown> } };

describe.each(DATABASE_KINDS)('monitors: bad input and quotas are refused before anything is created (%s)', (kind) => {
  let service: TestService;
  let fixtures: FixtureServer;
  let call: ReturnType<typeof monitorApi>;
  const prefix = `rs-test-mon-input-${randomBytes(4).toString('hex')}`;
  const monitorsOfOrganization = async () =>
    Number(
      (
        (await service.runtime.db.knex('monitors').where('organization_id', service.organizationId).count({ n: '*' }).first()) as {
          n: number | string;
        }
      ).n,
    );
  const fields = (body: ErrorBody) => (body.error.details as Array<{ field: string }>).map((d) => d.field);

  beforeAll(async () => {
    fixtures = await new FixtureServer().page('/page', '<h1>Still</h1>').start();
    // The deployment's minimum is the default one (60 s); no run is needed here (monitors are created paused).
    service = await startTestService({
      database: kind,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        MONITOR_MIN_INTERVAL_SECONDS: '60',
        MONITORS_PER_ORGANIZATION: '3',
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

  it('an interval under MONITOR_MIN_INTERVAL_SECONDS, a threshold of 150, an unknown option, a private address: 400 naming the field', async () => {
    const good = { url: `${fixtures.url}/page`, intervalSeconds: 60, paused: true };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, intervalSeconds: 30 }, 'intervalSeconds'],
      [{ ...good, intervalSeconds: 0 }, 'intervalSeconds'],
      [{ ...good, threshold: 150 }, 'threshold'],
      [{ ...good, format: 'jpeg' }, 'format'],
      [{ ...good, url: 'http://10.1.2.3/' }, 'url'],
      [{ ...good, webhookUrl: 'http://169.254.169.254/hook' }, 'webhookUrl'],
      [{ ...good, proxyUrl: 'http://192.168.0.1:3128' }, 'proxyUrl'],
      [{ ...good, url: 'ftp://example.com/' }, 'url'],
    ];
    for (const [body, field] of cases) {
      const answer = await call<ErrorBody>('POST', '/monitors', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.success).toBe(false);
      const named = Array.isArray(answer.body.error.details) ? fields(answer.body) : [];
      expect(named.length > 0 ? named : [answer.body.error.message], JSON.stringify(answer.body)).toEqual(
        expect.arrayContaining([expect.stringContaining(field)]),
      );
    }
    expect(await monitorsOfOrganization()).toBe(0);
    // The same checks on PATCH: nothing changes.
    const created = await call<{ data: { monitorId: string } }>('POST', '/monitors', good);
    expect(created.status).toBe(201);
    const id = created.body.data.monitorId;
    for (const [body, field] of [
      [{ intervalSeconds: 10 }, 'intervalSeconds'],
      [{ threshold: -1 }, 'threshold'],
      [{ url: 'http://10.0.0.1/' }, 'url'],
      [{ format: 'png' }, 'format'],
    ] as const) {
      const answer = await call<ErrorBody>('PATCH', `/monitors/${id}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(answer.body.error)).toContain(field);
    }
    const after = await call<{ data: { intervalSeconds: number; threshold: number; url: string } }>('GET', `/monitors/${id}`);
    expect(after.body.data).toMatchObject({ intervalSeconds: 60, threshold: 1, url: good.url });
    expect((await call('DELETE', `/monitors/${id}`)).status).toBe(204);
  });

  it("past the plan's number of monitors: 403 QUOTA_EXCEEDED naming the limit, nothing created; the plan's own number wins", async () => {
    const body = { url: `${fixtures.url}/page`, intervalSeconds: 3600, paused: true };
    for (let i = 0; i < 3; i++) expect((await call('POST', '/monitors', body)).status).toBe(201);
    const refused = await call<ErrorBody>('POST', '/monitors', body);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(refused.body.error.details).toMatchObject({ field: 'monitors', limit: 3, monitors: 3 });
    expect(await monitorsOfOrganization()).toBe(3);

    const plan = await service.runtime.db.knex('subscriptions').where('organization_id', service.organizationId).first('plan_id');
    await service.runtime.db.knex('plans').where('id', plan.plan_id).update({ max_monitors: 4 });
    expect((await call('POST', '/monitors', body)).status).toBe(201);
    const again = await call<ErrorBody>('POST', '/monitors', body);
    expect(again.status).toBe(403);
    expect(again.body.error.details).toMatchObject({ limit: 4 });
    // Several at once cannot pass the count together.
    await service.runtime.db.knex('plans').where('id', plan.plan_id).update({ max_monitors: 6 });
    const burst = await Promise.all(Array.from({ length: 6 }, () => call('POST', '/monitors', body)));
    expect(burst.filter((answer) => answer.status === 201)).toHaveLength(2);
    expect(await monitorsOfOrganization()).toBe(6);
  });

  it("another organization's monitor is a 404, its runs and images too", async () => {
    const { monitors } = (await call<{ data: { monitors: Array<{ monitorId: string }> } }>('GET', '/monitors')).body.data;
    const plan = await service.runtime.accounts.createPlan({ name: `other-${Date.now()}`, tier: 'test', creditsPerMonth: 10 });
    const other = await service.runtime.accounts.createOrganization('Other', plan);
    const key = await service.runtime.apiKeys.create({ organizationId: other.id, name: 'other' });
    const stranger = monitorApi(service.url, key.key);
    const id = monitors[0]!.monitorId;
    for (const [method, path] of [
      ['GET', `/monitors/${id}`],
      ['GET', `/monitors/${id}/runs`],
      ['DELETE', `/monitors/${id}`],
      ['PATCH', `/monitors/${id}`],
    ] as const) {
      const answer = await stranger<ErrorBody>(method, path, method === 'PATCH' ? { paused: false } : undefined);
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    expect((await stranger<{ data: { monitors: unknown[] } }>('GET', '/monitors')).body.data.monitors).toEqual([]);
  });
});

describe('monitors without REDIS_URL', () => {
  it('answer 503 SERVICE_UNAVAILABLE naming REDIS_URL, and nothing is created', async () => {
    const service = await startTestService();
    try {
      const answer = await monitorApi(service.url, service.apiKey)<ErrorBody>('POST', '/monitors', {
        url: 'https://example.com/',
        intervalSeconds: 60,
      });
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(answer.body.error.message).toContain('REDIS_URL');
      expect((await service.runtime.db.knex('monitors').count({ n: '*' }).first())!.n).toBe(0);
    } finally {
      await service.stop();
    }
  });
});
