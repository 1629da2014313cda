import { randomBytes, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { WebhookEventLog } from '@daguerre/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, verifyWebhook, type CaptureJobData, type DaguerreClient } from '../../client/src/index.js';
import { WEBHOOK_ATTEMPTS, WEBHOOK_RETRY_FACTORS } from '../../server/src/jobs/webhook-delivery.js';
import { AccountsRepository } from '../../server/src/store/accounts-repository.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { WebhookEventRepository } from '../../server/src/store/webhook-event-repository.js';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';
import { independentlyVerified, type Delivery } from '../helpers/webhooks.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TINY = (i: number) => `<body style="margin:0;background:rgb(${i * 30},120,60)"><p>${i}</p></body>`;
/** Six attempts of a receiver that always fails take 50 × (1 + 5 + 15 + 30 + 60) ms: 5.6 s. */
const RETRY_BASE_MS = 50;

interface Received extends Delivery {
  path: string;
  status: number;
}

interface ErrorAnswer {
  success: false;
  error: { code: string; message: string; details?: Array<{ field: string; message: string; value: unknown }> };
}

/**
 * docs/async-and-webhooks.md: every webhook event and every attempt is on record (time, response
 * status, duration, next retry), listed per job or batch with GET /webhooks/events, and can be sent
 * again under the same webhook-id with POST /webhooks/events/{eventId}/redeliver. Real Redis (a
 * prefix of the test's own), real Chromium, real SQLite; the receivers are real HTTP servers on
 * loopback.
 */
describe('webhook deliveries on record, and sending an event again', () => {
  let service: TestService;
  let client: DaguerreClient;
  let apiKey: string;
  let signingSecret: string;
  let other: { client: DaguerreClient; apiKey: string };
  const fixtures = new FixtureServer();
  const received: Received[] = [];
  /** What each receiver path answers; 204 unless set. */
  const answers = new Map<string, number>();
  /** Responses of /hold, answered when the test says so (a capture that stays active until then). */
  const held: ServerResponse[] = [];
  const prefix = `rs-test-hooks-${randomBytes(4).toString('hex')}`;

  const receiverAt = (path: string) => `${fixtures.url}${path}`;
  const deliveriesOf = (eventId: string) => received.filter((delivery) => delivery.headers['webhook-id'] === eventId);
  const call = async (method: string, path: string, key = apiKey) => {
    const response = await service.get(path, { method, headers: { 'x-api-key': key } });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  const eventsOf = async (query: { jobId: string } | { batchId: string }, on = client): Promise<WebhookEventLog[]> => {
    const answer = await on.raw.listWebhookEvents({ query });
    if (answer.status !== 200) throw new Error(`GET /webhooks/events answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body.data.events;
  };
  const webhookState = async (jobId: string) =>
    ((await service.runtime.db.knex('capture_jobs').where('id', jobId).first('webhook_state')) as { webhook_state: string | null })
      .webhook_state;

  beforeAll(async () => {
    for (const path of ['/failing', '/ok', '/recorded']) {
      fixtures.route(path, (req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          const status = answers.get(path) ?? 204;
          received.push({ path, status, headers: req.headers, body });
          res.writeHead(status).end();
        });
      });
    }
    fixtures.route('/hold', (_req, res) => void held.push(res));
    await fixtures.start();
    service = await startTestService({
      credits: 100,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        CAPTURE_WORKERS: '1',
        // A held page stays active until the test releases it, however slow the machine.
        CAPTURE_TIMEOUT_MS: '300000',
        WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
        WEBHOOK_TIMEOUT_MS: '3000',
        RATE_LIMIT_MAX: '1000',
      },
    });
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'hooks' });
    apiKey = key.key;
    signingSecret = key.signingSecret;
    client = createClient({ baseUrl: service.url, apiKey });
    const { accounts, apiKeys } = service.runtime;
    const otherOrganization = await accounts.createOrganization(
      'Other org',
      await accounts.createPlan({ name: `other-${prefix}`, tier: 'test', creditsPerMonth: 10 }),
    );
    const otherKey = await apiKeys.create({ organizationId: otherOrganization.id, name: 'other' });
    other = { apiKey: otherKey.key, client: createClient({ baseUrl: service.url, apiKey: otherKey.key }) };
  });
  afterAll(async () => {
    for (const response of held) if (!response.destroyed) response.end();
    await service?.stop();
    await fixtures.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  let failedJob: { jobId: string; eventId: string };

  it('a receiver that answers 500: each attempt is on record with status 500, its duration and when the next is due; none after the last', async () => {
    answers.set('/failing', 500);
    const { jobId } = await client.captureAsync({
      html: TINY(1),
      viewportWidth: 100,
      viewportHeight: 100,
      webhookUrl: receiverAt('/failing'),
    });
    const eventId = `msg_${jobId}`;
    failedJob = { jobId, eventId };
    // The last attempt is on record once the event says failed: only it has no retry left.
    const [event, ...more] = await until(
      async () => {
        const events = await eventsOf({ jobId });
        return events[0]?.status === 'failed' ? events : undefined;
      },
      60_000,
      'the six failed attempts on record',
    );
    expect(more).toEqual([]);
    expect(event).toMatchObject({ eventId, type: 'capture.succeeded', jobId, url: receiverAt('/failing'), status: 'failed' });
    expect(event!.batchId).toBeUndefined();
    expect(event!.attempts.map((attempt) => [attempt.attempt, attempt.resend, attempt.responseStatus])).toEqual(
      Array.from({ length: WEBHOOK_ATTEMPTS }, (_, i) => [i + 1, false, 500]),
    );
    for (const [i, attempt] of event!.attempts.entries()) {
      expect(attempt.error).toBe('the receiver answered 500');
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
      if (i === WEBHOOK_ATTEMPTS - 1) {
        expect(attempt.nextRetryAt).toBeNull();
      } else {
        // Due when BullMQ's backoff brings the attempt after it: the base times this attempt's factor, from its end.
        expect(Date.parse(attempt.nextRetryAt!) - Date.parse(attempt.attemptedAt) - attempt.durationMs).toBe(
          RETRY_BASE_MS * WEBHOOK_RETRY_FACTORS[i]!,
        );
        expect(Date.parse(event!.attempts[i + 1]!.attemptedAt)).toBeGreaterThan(Date.parse(attempt.attemptedAt));
      }
    }
    // What the receiver saw agrees: six requests, one webhook-id, one body.
    const deliveries = deliveriesOf(eventId);
    expect(deliveries).toHaveLength(WEBHOOK_ATTEMPTS);
    expect(new Set(deliveries.map((delivery) => delivery.body)).size).toBe(1);
    expect(await webhookState(jobId)).toBe('gave_up');
  }, 90_000);

  it('sending it again makes one more attempt under the same webhook-id, with the same body bytes and a fresh valid signature', async () => {
    const { jobId, eventId } = failedJob;
    answers.set('/failing', 204);
    const first = deliveriesOf(eventId)[0]!;
    const accepted = await client.raw.redeliverWebhookEvent({ params: { eventId } });
    expect(accepted.status).toBe(202);
    // The event as it stands (the resend may already have been made: the worker is that quick).
    expect(accepted.status === 202 && accepted.body.data).toMatchObject({ eventId, jobId, type: 'capture.succeeded' });

    const resent = await until(() => deliveriesOf(eventId)[WEBHOOK_ATTEMPTS], 20_000, 'the resend at the receiver');
    expect(resent.body).toBe(first.body);
    expect(resent.headers['content-length']).toBe(first.headers['content-length']);
    expect(independentlyVerified(signingSecret, resent)).toBe(true);
    // Signed afresh: the first attempt was more than five seconds before.
    expect(Number(resent.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']));
    expect(resent.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    const verified = verifyWebhook(signingSecret, resent.body, resent.headers as Record<string, string>);
    expect(verified.type === 'capture.succeeded' && (verified.data as CaptureJobData).jobId).toBe(jobId);

    const event = await until(
      async () => {
        const [found] = await eventsOf({ jobId });
        return found && found.attempts.length === WEBHOOK_ATTEMPTS + 1 ? found : undefined;
      },
      10_000,
      'the resend on record',
    );
    expect(event.status).toBe('delivered');
    expect(event.attempts.at(-1)).toMatchObject({ attempt: 1, resend: true, responseStatus: 204, error: null, nextRetryAt: null });
    // One attempt only: nothing more arrives.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(deliveriesOf(eventId)).toHaveLength(WEBHOOK_ATTEMPTS + 1);
  });

  it("another organization gets 404 for the job's events and for sending them again; nothing is sent", async () => {
    const { jobId, eventId } = failedJob;
    const before = deliveriesOf(eventId).length;
    const listed = await call('GET', `/webhooks/events?jobId=${jobId}`, other.apiKey);
    expect(listed.status).toBe(404);
    expect(listed.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    const resend = await call('POST', `/webhooks/events/${eventId}/redeliver`, other.apiKey);
    expect(resend.status).toBe(404);
    expect(resend.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    // The same answer as for ids that exist nowhere.
    expect((await call('GET', `/webhooks/events?batchId=${randomUUID()}`)).status).toBe(404);
    expect((await call('POST', `/webhooks/events/msg_${randomUUID()}/redeliver`)).status).toBe(404);
    expect((await call('POST', '/webhooks/events/not-an-event/redeliver')).status).toBe(404);
    expect((await call('GET', `/webhooks/events?jobId=${jobId}`, 'rs_not-a-key')).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(deliveriesOf(eventId)).toHaveLength(before);
  });

  it('bad input gets the spec error body naming the field and what it takes', async () => {
    const neither = await call('GET', '/webhooks/events');
    expect(neither.status).toBe(400);
    expect(neither.body).toMatchObject({
      success: false,
      error: { code: 'MISSING_REQUIRED_FIELD', details: [{ field: 'jobId', message: 'Give jobId (an async job) or batchId (a batch)' }] },
    });
    const both = await call('GET', `/webhooks/events?jobId=${randomUUID()}&batchId=${randomUUID()}`);
    expect(both.status).toBe(400);
    expect((both.body as ErrorAnswer).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: 'batchId', message: 'Give only one of jobId or batchId' }],
    });
    const notUuid = await call('GET', '/webhooks/events?jobId=nope');
    expect(notUuid.status).toBe(400);
    expect((notUuid.body as ErrorAnswer).error.details).toEqual([
      { field: 'jobId', message: expect.stringContaining('must be the UUID of an async job'), value: 'nope' },
    ]);
    const unknown = await call('GET', `/webhooks/events?job=${randomUUID()}`);
    expect(unknown.status).toBe(400);
    expect((unknown.body as ErrorAnswer).error.details!.map((issue) => issue.field)).toContain('job');
    const repeated = await call('GET', `/webhooks/events?jobId=${randomUUID()}&jobId=${randomUUID()}`);
    expect(repeated.status).toBe(400);
  });

  it("a batch's webhook is listed by batchId; an item without a webhook lists none", async () => {
    const batch = await client.captureBulk({
      requests: [{ html: TINY(2), viewportWidth: 100, viewportHeight: 100 }],
      webhookUrl: receiverAt('/ok'),
    });
    const eventId = `msg_batch_${batch.batchId}`;
    await until(() => deliveriesOf(eventId)[0], 60_000, 'the batch webhook');
    const [event] = await until(
      async () => {
        const events = await eventsOf({ batchId: batch.batchId });
        return events[0]?.attempts.length ? events : undefined;
      },
      10_000,
      'the batch webhook on record',
    );
    expect(event).toMatchObject({ eventId, type: 'batch.completed', batchId: batch.batchId, status: 'delivered' });
    expect(event!.jobId).toBeUndefined();
    expect(event!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, resend: false, responseStatus: 204, error: null, nextRetryAt: null }),
    ]);
    expect(await eventsOf({ jobId: batch.items[0]!.jobId })).toEqual([]);
    expect((await call('GET', `/webhooks/events?batchId=${batch.batchId}`, other.apiKey)).status).toBe(404);
  });

  it('DELETE /captures/{jobId} cancels a queued and an active job (never charged, capture.failed CANCELLED); an ended job is answered as it is', async () => {
    const usedBefore = (await client.usage()).credits.usedThisPeriod;
    // The one worker renders a page held open: that job is active, the next one waits behind it.
    const active = await client.captureAsync({ url: receiverAt('/hold'), viewportWidth: 100, viewportHeight: 100 });
    await fixtures.waitForRequest('/hold', 60_000);
    expect((await client.getCapture(active.jobId)).status).toBe('active');
    const queued = await client.captureAsync({ html: TINY(3), viewportWidth: 100, viewportHeight: 100, webhookUrl: receiverAt('/ok') });

    expect((await call('DELETE', `/captures/${queued.jobId}`, other.apiKey)).status).toBe(404);
    const cancelled = await client.raw.cancelCaptureJob({ params: { jobId: queued.jobId } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.status === 200 && cancelled.body.data).toMatchObject({
      jobId: queued.jobId,
      status: 'failed',
      creditsCharged: 0,
      error: { code: 'CANCELLED' },
    });
    const cancelledActive = await call('DELETE', `/captures/${active.jobId}`);
    expect(cancelledActive.body).toMatchObject({ success: true, data: { status: 'failed', error: { code: 'CANCELLED' } } });
    for (const response of held.splice(0)) response.writeHead(200, { 'content-type': 'text/html' }).end('<p>late</p>');

    // The cancelled job's own webhook says so, and is on record.
    const delivery = await until(() => deliveriesOf(`msg_${queued.jobId}`)[0], 20_000, 'the capture.failed webhook');
    expect(JSON.parse(delivery.body)).toMatchObject({
      type: 'capture.failed',
      data: { jobId: queued.jobId, error: { code: 'CANCELLED' } },
    });
    expect((await eventsOf({ jobId: queued.jobId }))[0]).toMatchObject({ type: 'capture.failed', eventId: `msg_${queued.jobId}` });

    // The active one's render ends on its own and loses: still cancelled, nothing charged.
    const again = await until(
      async () => {
        const job = await client.getCapture(active.jobId);
        return job.status === 'failed' ? job : undefined;
      },
      10_000,
      'the cancelled active job',
    );
    expect(again.error?.code).toBe('CANCELLED');
    const ended = await client.captureAsync({ html: TINY(4), viewportWidth: 100, viewportHeight: 100 });
    await client.waitForCapture(ended.jobId, { intervalMs: 100, timeoutMs: 60_000 });
    const answered = await call('DELETE', `/captures/${ended.jobId}`);
    expect(answered.body).toMatchObject({ success: true, data: { jobId: ended.jobId, status: 'succeeded', creditsCharged: 1 } });
    expect((await client.getCapture(active.jobId)).creditsCharged).toBe(0);
    expect((await client.usage()).credits.usedThisPeriod - usedBefore).toBe(1);
  }, 120_000);

  it('a record that cannot be written costs the record, never the delivery', async () => {
    const knex = service.runtime.db.knex;
    await knex.raw('ALTER TABLE webhook_attempts RENAME TO webhook_attempts_away');
    try {
      const { jobId } = await client.captureAsync({
        html: TINY(5),
        viewportWidth: 100,
        viewportHeight: 100,
        webhookUrl: receiverAt('/recorded'),
      });
      const delivery = await until(() => deliveriesOf(`msg_${jobId}`)[0], 60_000, 'the webhook, delivered without its record');
      expect(independentlyVerified(signingSecret, delivery)).toBe(true);
      await until(
        async () => ((await webhookState(jobId)) === 'delivered' ? true : undefined),
        10_000,
        'the job to record its webhook delivered',
      );
    } finally {
      await knex.raw('ALTER TABLE webhook_attempts_away RENAME TO webhook_attempts');
    }
  }, 90_000);
});

/** The records themselves on both databases: the body kept byte for byte (a large batch, any script), a second write a no-op. */
describe.each(DATABASE_KINDS)('webhook records on %s', (kind) => {
  let database: TestDatabase;
  let db: Database;
  let events: WebhookEventRepository;
  let organizationId: string;
  let otherOrganizationId: string;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    db = openDatabase(database.url);
    await migrate(db);
    const accounts = new AccountsRepository(db);
    const plan = await accounts.createPlan({ name: `hooks-${randomUUID()}`, tier: 'test', creditsPerMonth: 10 });
    organizationId = (await accounts.createOrganization('Hooks org', plan)).id;
    otherOrganizationId = (await accounts.createOrganization('Other org', plan)).id;
    events = new WebhookEventRepository(db);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('keeps the exact body bytes of a large event, records an event once, lists attempts oldest first and sweeps old events', async () => {
    const batchId = randomUUID();
    // Over 64 KiB (a plain BLOB's size on MariaDB) and in several scripts and emoji (4-byte UTF-8).
    const items = Array.from({ length: 1000 }, (_, i) => ({ index: i, jobId: randomUUID(), title: `Größe ✓ 日本語 🎉 ${i}` }));
    const body = JSON.stringify({ type: 'batch.completed', data: { batchId, items } });
    expect(Buffer.byteLength(body)).toBeGreaterThan(64 * 1024);
    const event = {
      id: `msg_batch_${batchId}`,
      organizationId,
      jobId: null,
      batchId,
      eventType: 'batch.completed',
      url: 'https://hooks.example/x?token=s3cret',
      apiKeyId: null,
      body: Buffer.from(body),
    };
    await events.record(event, 1_000);
    await events.record({ ...event, body: Buffer.from('{"type":"other"}') }, 2_000);
    const stored = (await events.get(event.id))!;
    expect(stored.body.equals(Buffer.from(body))).toBe(true);
    expect(stored.body.toString('utf8')).toBe(body);
    expect(stored).toMatchObject({ organizationId, batchId, jobId: null, eventType: 'batch.completed', createdAt: 1_000 });

    await events.addAttempt({
      eventId: event.id,
      deliveryId: event.id,
      attempt: 2,
      attemptedAt: 3_000,
      responseStatus: null,
      error: 'no answer (ECONNREFUSED)',
      durationMs: 4,
      nextRetryAt: null,
    });
    await events.addAttempt({
      eventId: event.id,
      deliveryId: event.id,
      attempt: 1,
      attemptedAt: 2_000,
      responseStatus: 500,
      error: 'the receiver answered 500',
      durationMs: 12,
      nextRetryAt: 2_512,
    });
    expect((await events.attemptsOf([event.id])).map((attempt) => [attempt.attempt, attempt.responseStatus, attempt.nextRetryAt])).toEqual([
      [1, 500, 2_512],
      [2, null, null],
    ]);
    expect((await events.eventsOf(organizationId, { batchId })).map((found) => found.id)).toEqual([event.id]);
    expect(await events.eventsOf(otherOrganizationId, { batchId })).toEqual([]);

    expect(await events.removeCreatedBefore(1_000)).toBe(0);
    expect(await events.removeCreatedBefore(1_001)).toBe(1);
    expect(await events.get(event.id)).toBeUndefined();
    expect(await events.attemptsOf([event.id])).toEqual([]);
  });
});
