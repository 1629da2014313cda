import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, DaguerreError, verifyWebhook, type BatchData, type DaguerreClient } from '../../client/src/index.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng } from '../helpers/images.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { capturedLogLines, startTestService, type TestService } from '../helpers/test-service.js';
import { DEFAULT_SESSION_TIMES } from '../../server/src/dashboard/index.js';
import { SessionRepository } from '../../server/src/store/session-repository.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { type Delivery, independentlyVerified } from '../helpers/webhooks.js';
import { until } from '../helpers/until.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { systemResolver } from '../../server/src/security/resolver.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TINY = (i: number) => `<body style="margin:0;background:rgb(${i % 200},90,160)"><p>${i}</p></body>`;

async function daguerreError(work: Promise<unknown>): Promise<DaguerreError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DaguerreError);
  return error as DaguerreError;
}

describe('bulk captures: POST/GET/DELETE /captures/bulk', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let client: DaguerreClient;
  let signingSecret: string;
  const deliveries: Delivery[] = [];
  const prefix = `rs-test-bulk-${randomBytes(4).toString('hex')}`;
  const hookUrl = () => `${fixtures.url}/hook`;
  const used = async () => (await client.usage()).credits.usedThisPeriod;
  const jobsOfOrganization = async () =>
    Number(
      (
        (await service.runtime.db.knex('capture_jobs').where('organization_id', service.organizationId).count({ n: '*' }).first()) as {
          n: number | string;
        }
      ).n,
    );

  beforeAll(async () => {
    fixtures = new FixtureServer().route('/hook', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        deliveries.push({ headers: req.headers, body });
        res.statusCode = 204;
        res.end();
      });
    });
    await fixtures.start();
    service = await startTestService({
      credits: 1_000,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        CAPTURE_WORKERS: '2',
        WEBHOOK_RETRY_BASE_MS: '300',
        WEBHOOK_TIMEOUT_MS: '3000',
        RATE_LIMIT_MAX: '1000',
      },
    });
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'bulk' });
    signingSecret = key.signingSecret;
    client = createClient({ baseUrl: service.url, apiKey: key.key });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('one bad item answers 400 naming its index and field; nothing is queued or charged', async () => {
    const before = { jobs: await jobsOfOrganization(), used: await used() };
    const requests = Array.from({ length: 12 }, (_, i) => ({ html: TINY(i) }));
    requests[7] = { html: TINY(7), viewportWidth: 5 } as never;
    const bad = await daguerreError(client.captureBulk({ defaults: { viewportWidth: 100, viewportHeight: 100 }, requests }));
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('VALIDATION_ERROR');
    expect((bad.details as Array<{ field: string }>).map((d) => d.field)).toEqual(['requests[7].viewportWidth']);
    expect(bad.message).toContain('requests[7]');

    // A rule across fields (url and html together) and an unknown field, in other items.
    const crossed = await daguerreError(
      client.captureBulk({
        requests: [{ html: TINY(0) }, { html: TINY(1), url: `${fixtures.url}/bands.html` }, { html: 'x', colour: 'red' } as never],
      }),
    );
    expect((crossed.details as Array<{ field: string }>).map((d) => d.field).sort()).toEqual([
      'requests[1].html',
      'requests[1].url',
      'requests[2].colour',
    ]);

    // A destination the egress policy refuses is found by the server's own check, before queuing.
    const refused = await daguerreError(
      client.captureBulk({ requests: [{ html: TINY(0) }, { html: TINY(1) }, { url: 'http://10.1.2.3/' }] }),
    );
    expect(refused.status).toBe(400);
    expect((refused.details as Array<{ field: string }>)[0]!.field).toBe('requests[2].url');

    const tooMany = await daguerreError(client.captureBulk({ requests: Array.from({ length: 501 }, () => ({ html: 'x' })) }));
    expect((tooMany.details as Array<{ field: string }>)[0]!.field).toBe('requests');
    expect(await jobsOfOrganization()).toBe(before.jobs);
    expect(await used()).toBe(before.used);
  });

  it("a batch of 100 with failing targets: every item its own job, counts, charges on success only, one signed batch webhook; another organization's job is not held back", async () => {
    const before = await used();
    const failing = new Set([13, 47, 81]);
    const requests = Array.from({ length: 100 }, (_, i) =>
      failing.has(i)
        ? { url: `${fixtures.url}/no-such-page.html`, failOnHttpError: true }
        : {
            html: TINY(i),
            ...(i === 0 ? { viewportWidth: 140 } : {}),
            ...(i % 3 === 1 ? { format: 'jpeg' as const } : i % 3 === 2 ? { format: 'webp' as const } : {}),
          },
    );
    const accepted = await client.captureBulk({ defaults: { viewportWidth: 100, viewportHeight: 100 }, requests, webhookUrl: hookUrl() });
    expect(accepted.total).toBe(100);
    expect(accepted.items).toHaveLength(100);
    expect(new Set(accepted.items.map((item) => item.jobId)).size).toBe(100);
    expect(['queued', 'running', 'completed']).toContain(accepted.status);

    // Another organization's single job, sent behind the backlog of 100, ends while the batch still has items waiting.
    const other = await service.runtime.accounts.createOrganization(
      'Other org',
      await service.runtime.accounts.createPlan({ name: `other-${prefix}`, tier: 'test', creditsPerMonth: 10 }),
    );
    const otherKey = await service.runtime.apiKeys.create({ organizationId: other.id, name: 'other' });
    const otherClient = createClient({ baseUrl: service.url, apiKey: otherKey.key });
    const single = await otherClient.captureAsync({ html: TINY(500), viewportWidth: 100, viewportHeight: 100 });
    const singleDone = await otherClient.waitForCapture(single.jobId, { intervalMs: 100, timeoutMs: 120_000 });
    expect(singleDone.status).toBe('succeeded');

    const done = await client.waitForBatch(accepted.batchId, { intervalMs: 250, timeoutMs: 300_000 });
    expect(done.status).toBe('completed');
    expect(done.counts).toEqual({ succeeded: 97, failed: 3, queued: 0, running: 0, cancelled: 0 });
    expect(done.creditsCharged).toBe(97);
    expect((await used()) - before).toBe(97);
    for (const index of failing) expect(done.items[index]).toMatchObject({ index, status: 'failed', error: { code: 'TARGET_HTTP_ERROR' } });
    expect(done.items[0]!.fileUrl).toBe(`${service.url}/captures/${done.items[0]!.jobId}/file`);
    // Defaults under each item, the item's own field over them.
    const first = decodePng(Buffer.from((await client.getCaptureFile(done.items[0]!.jobId)).bytes));
    const second = decodePng(Buffer.from((await client.getCaptureFile(done.items[3]!.jobId)).bytes));
    expect((await client.getCaptureFile(done.items[1]!.jobId)).contentType).toBe('image/jpeg');
    expect([first.width, first.height, second.width, second.height]).toEqual([140, 100, 100, 100]);
    // Each item is a job of its own, visible at its own status URL.
    expect((await client.getCapture(done.items[13]!.jobId)).status).toBe('failed');
    // Fair queue: once the other organization's job was queued, at most the two worker slots already
    // busy took batch items before it (in arrival order it would have waited for the whole backlog).
    const singleQueued = Date.parse(singleDone.createdAt);
    const singleStarted = Date.parse(singleDone.startedAt!);
    const itemStarts = await Promise.all(done.items.map(async (item) => Date.parse((await client.getCapture(item.jobId)).startedAt ?? '')));
    const startedAfterQueued = itemStarts.filter((started) => started > singleQueued);
    expect(startedAfterQueued.length).toBeGreaterThan(0);
    expect(startedAfterQueued.filter((started) => started < singleStarted).length).toBeLessThanOrEqual(2);

    const delivery = await until(
      async () => deliveries.find((d) => JSON.parse(d.body).data?.batchId === accepted.batchId),
      30_000,
      'the batch webhook',
    );
    expect(independentlyVerified(signingSecret, delivery)).toBe(true);
    const event = verifyWebhook(signingSecret, delivery.body, delivery.headers as Record<string, string>);
    // The verifier's type names batch events too: narrowing on type types data as the batch.
    if (event.type !== 'batch.completed') throw new Error(`expected batch.completed, got ${event.type}`);
    expect(event.data.counts).toEqual(done.counts);
    expect(delivery.headers['webhook-id']).toBe(`msg_batch_${accepted.batchId}`);
    expect(deliveries.filter((d) => d.headers['webhook-id'] === `msg_batch_${accepted.batchId}`)).toHaveLength(1);
  }, 320_000);

  it('DELETE cancels the items not yet ended: never charged, the batch says cancelled, its webhook says so', async () => {
    const before = await used();
    // Slow items (a delay each), so that most are still queued when the batch is cancelled.
    const requests = Array.from({ length: 12 }, (_, i) => ({ html: TINY(i), delay: 1_500, webhookUrl: i === 11 ? hookUrl() : undefined }));
    const accepted = await client.captureBulk({ defaults: { viewportWidth: 100, viewportHeight: 100 }, requests, webhookUrl: hookUrl() });
    const cancelled = await client.cancelBatch(accepted.batchId);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.finishedAt).toBeDefined();
    expect(cancelled.counts.cancelled).toBeGreaterThan(0);
    expect(cancelled.counts.cancelled + cancelled.counts.succeeded + cancelled.counts.failed).toBe(12);
    expect(cancelled.counts.queued + cancelled.counts.running).toBe(0);
    const cancelledItem = cancelled.items.find((item) => item.status === 'cancelled')!;
    expect(cancelledItem.error?.code).toBe('CANCELLED');
    expect((await client.getCapture(cancelledItem.jobId)).status).toBe('failed');
    // Cancelling again changes nothing.
    expect((await client.cancelBatch(accepted.batchId)).counts).toEqual(cancelled.counts);

    // Items a worker was rendering when the batch was cancelled release their credits when they end.
    await until(
      async () => {
        const ledger = await service.runtime.credits.ledger(service.organizationId, 1_000);
        return ledger.some((row: { status: string }) => row.status === 'reserved') ? undefined : true;
      },
      60_000,
      'no reservation left',
    );
    const after = await client.getBatch(accepted.batchId);
    expect(after.status).toBe('cancelled');
    expect((await used()) - before).toBe(after.counts.succeeded);
    expect(after.creditsCharged).toBe(after.counts.succeeded);

    const delivery = await until(
      async () => deliveries.find((d) => d.headers['webhook-id'] === `msg_batch_${accepted.batchId}`),
      30_000,
      'the cancel webhook',
    );
    expect(independentlyVerified(signingSecret, delivery)).toBe(true);
    expect(JSON.parse(delivery.body)).toMatchObject({ type: 'batch.cancelled', data: { batchId: accepted.batchId, status: 'cancelled' } });
    // The item with its own webhook got one too (capture.failed with code CANCELLED, or capture.succeeded).
    const itemHook = await until(
      async () => deliveries.find((d) => d.headers['webhook-id'] === `msg_${accepted.items[11]!.jobId}`),
      30_000,
      'the item webhook',
    );
    expect(JSON.parse(itemHook.body).data.jobId).toBe(accepted.items[11]!.jobId);
  }, 120_000);

  it('another organization sees no batch of this one (404), and an unknown id is 404', async () => {
    const accepted = await client.captureBulk({ requests: [{ html: TINY(1), viewportWidth: 100, viewportHeight: 100 }] });
    const stranger = await daguerreError(
      service.client.getBatch(accepted.batchId).then(async () => {
        // service.client is the same organization: use a key of another organization instead.
        const org = await service.runtime.accounts.createOrganization(
          'Stranger',
          await service.runtime.accounts.createPlan({ name: `stranger-${prefix}`, tier: 'test', creditsPerMonth: 1 }),
        );
        const key = await service.runtime.apiKeys.create({ organizationId: org.id, name: 'stranger' });
        return createClient({ baseUrl: service.url, apiKey: key.key }).getBatch(accepted.batchId);
      }),
    );
    expect(stranger.status).toBe(404);
    expect((await daguerreError(client.getBatch('00000000-0000-4000-8000-000000000000'))).status).toBe(404);
    await client.waitForBatch(accepted.batchId, { intervalMs: 200, timeoutMs: 60_000 });
  });

  it("the dashboard lists the organization's batches with their counts", async () => {
    const accepted = await client.captureBulk({
      requests: [
        { html: TINY(2), viewportWidth: 100, viewportHeight: 100 },
        { html: TINY(3), viewportWidth: 100, viewportHeight: 100 },
      ],
    });
    const done = await client.waitForBatch(accepted.batchId, { intervalMs: 200, timeoutMs: 60_000 });
    const { accounts } = service.runtime;
    const user = await accounts.createUser(`bulk-${prefix}@example.test`, 'Bulk Viewer', await hashPassword('a long enough password'));
    await accounts.addMember(service.organizationId, user.id);
    const { token } = await new SessionRepository(service.runtime.db, DEFAULT_SESSION_TIMES).create(
      user.id,
      service.organizationId,
      Date.now(),
    );
    const response = await service.get('/dashboard/batches', { headers: { cookie: `daguerre_session=${token}` } });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain(`data-batch-id="${accepted.batchId}"`);
    const row = page.slice(page.indexOf(`data-batch-id="${accepted.batchId}"`));
    expect(row.slice(0, row.indexOf('</tr>'))).toMatch(
      new RegExp(`>completed<[\\s\\S]*<td class="num">2</td>\\s*<td class="num">${done.counts.succeeded}</td>`),
    );
    expect(page).toContain('href="/dashboard/batches"');
  });
});

describe('the POST /captures/bulk example of openapi.json (what Swagger UI pre-fills)', () => {
  let service: TestService;
  const prefix = `rs-test-bulk-example-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    service = await startTestService({
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '0', RATE_LIMIT_MAX: '1000' },
      // The example names example.com, which this closed network cannot resolve; a public address
      // lets it be queued (no worker here renders it).
      resolver: async (host) => (host === 'example.com' ? ['93.184.215.14'] : systemResolver(host)),
    });
  });
  afterAll(async () => {
    await service?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('is accepted as sent: 202, one job per item', async () => {
    const document = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { example: { requests: unknown[] } }> } }>>;
    };
    const example = document.paths['/captures/bulk']!.post!.requestBody.content['application/json']!.example;
    const response = await fetch(`${service.url}/captures/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
      body: JSON.stringify(example),
    });
    const body = (await response.json()) as { data: BatchData };
    expect(response.status, JSON.stringify(body)).toBe(202);
    expect(body.data.total).toBe(example.requests.length);
    expect(body.data.items.map((item) => item.status)).toEqual(example.requests.map(() => 'queued'));
    // Nothing is left to run.
    expect((await service.client.cancelBatch(body.data.batchId)).status).toBe('cancelled');
  });
});

describe('bulk captures when the queue fails part-way (a real fault: a private Redis out of memory)', () => {
  let redis: PrivateRedis;
  let service: TestService;

  beforeAll(async () => {
    redis = await new PrivateRedis().start();
    // No workers (capture or monitor): nothing of the batch may run, and nothing else writes to the little room left in Redis.
    service = await startTestService({
      credits: 100,
      env: { REDIS_URL: redis.url, JOB_QUEUE_PREFIX: 'rs-bulk-oom', CAPTURE_WORKERS: '0', MONITOR_WORKERS: '0', RATE_LIMIT_MAX: '1000' },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await redis?.stop();
  });

  it('answers 503 and leaves no batch, no job record and no charge behind', async () => {
    const admin = new Redis(redis.url);
    try {
      // Room for a few of the items' queue entries (about 90 KB each), not for all ten.
      const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', String(used + 400_000));
      const big = (i: number) => `<p>${i}</p><!--${'x'.repeat(90_000)}-->`;
      const failed = await daguerreError(
        service.client.captureBulk({
          requests: Array.from({ length: 10 }, (_, i) => ({ html: big(i), viewportWidth: 100, viewportHeight: 100 })),
        }),
      );
      expect(failed.status).toBe(503);
      // Part-way indeed: some items had been queued (and recorded) before Redis refused the next one.
      const report = capturedLogLines
        .map((line) => JSON.parse(line) as { msg?: string; queued?: number })
        .find((line) => line.msg?.startsWith('queuing a batch failed part-way'));
      expect(report?.queued).toBeGreaterThan(0);
      const knex = service.runtime.db.knex;
      const count = async (table: string) => Number(((await knex(table).count({ n: '*' }).first()) as { n: number | string }).n);
      expect(await count('capture_jobs')).toBe(0);
      expect(await count('capture_batches')).toBe(0);
      expect(await count('capture_batch_items')).toBe(0);
      expect((await service.client.usage()).credits.usedThisPeriod).toBe(0);
    } finally {
      await admin.config('SET', 'maxmemory', '0').catch(() => undefined);
      admin.disconnect();
    }
  });
});
