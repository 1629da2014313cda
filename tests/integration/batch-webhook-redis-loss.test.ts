import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type BatchData } from '../../client/src/index.js';
import { WEBHOOK_QUEUE } from '../../server/src/jobs/job-types.js';
import { WEBHOOK_ATTEMPTS } from '../../server/src/jobs/webhook-delivery.js';
import { FixtureServer, type RouteHandler } from '../helpers/fixture-server.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';
import { independentlyVerified, type Delivery } from '../helpers/webhooks.js';

const TINY = (i: number) => `<body style="margin:0;background:rgb(${i * 40},90,160)"><p>${i}</p></body>`;

interface Attempt extends Delivery {
  id: string;
  status: number;
}

/**
 * docs/bulk.md: a batch webhook waiting in Redis for its retry survives Redis losing its data,
 * as job webhooks do: the batch's record says whether its webhook was delivered or given up, and
 * one neither is queued again under the same webhook-id. The fault is real: FLUSHALL on a Redis of
 * the test's own (never the shared one).
 */
describe('batch webhooks after Redis lost its data', () => {
  const redis = new PrivateRedis();
  const fixtures = new FixtureServer();
  const attempts: Attempt[] = [];
  /** What /hook answers: 503 until the test lets it succeed. */
  let hookStatus = 503;
  let admin: Redis;

  const receiver =
    (status: () => number): RouteHandler =>
    (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const answer = status();
        attempts.push({ id: String(req.headers['webhook-id']), status: answer, headers: req.headers, body });
        res.writeHead(answer).end();
      });
    };

  beforeAll(async () => {
    await redis.start();
    fixtures.route(
      '/hook',
      receiver(() => hookStatus),
    );
    fixtures.route(
      '/refuse',
      receiver(() => 503),
    );
    await fixtures.start();
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await fixtures.stop();
    await redis.stop();
  });

  /** A service on the private Redis with one worker; every check (queue against records, batches) each 2 s. */
  async function service(prefix: string, retryBaseMs: number) {
    const started = await startTestService({
      credits: 100,
      env: {
        REDIS_URL: redis.url,
        JOB_QUEUE_PREFIX: prefix,
        CAPTURE_WORKERS: '1',
        JOB_LOCK_MS: '2000',
        WEBHOOK_RETRY_BASE_MS: String(retryBaseMs),
        RATE_LIMIT_MAX: '1000',
      },
    });
    const key = await started.runtime.apiKeys.create({ organizationId: started.organizationId, name: 'batch-hooks' });
    return { started, signingSecret: key.signingSecret, client: createClient({ baseUrl: started.url, apiKey: key.key }) };
  }

  const webhookState = async (svc: TestService, batchId: string) =>
    ((await svc.runtime.db.knex('capture_batches').where('id', batchId).first('webhook_state')) as { webhook_state: string | null })
      .webhook_state;
  const attemptsOf = (id: string) => attempts.filter((attempt) => attempt.id === id);

  it('a batch webhook waiting for its retry when Redis is emptied is queued again from the database and delivered once the receiver answers 2xx', async () => {
    // The queue's own retry would come 10 minutes after the first failure: only the rebuild can deliver within the test.
    const { started: svc, signingSecret, client } = await service('batch-hook-loss', 600_000);
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(WEBHOOK_QUEUE, { connection, prefix: 'batch-hook-loss' });
    try {
      hookStatus = 503;
      const accepted = await client.captureBulk({
        defaults: { viewportWidth: 100, viewportHeight: 100 },
        requests: [{ html: TINY(1) }, { html: TINY(2) }],
        webhookUrl: `${fixtures.url}/hook`,
      });
      const messageId = `msg_batch_${accepted.batchId}`;
      await until(() => (attemptsOf(messageId).length > 0 ? true : undefined), 60_000, 'the first (refused) attempt of the batch webhook');
      // Waiting for its retry, in Redis only: the record says queued, the queue holds it delayed.
      await until(
        async () => ((await queue.getJobState(messageId)) === 'delayed' ? true : undefined),
        10_000,
        'the webhook to wait for its retry',
      );
      expect(await webhookState(svc, accepted.batchId)).toBe('queued');

      await admin.flushall();
      expect(await queue.getJobState(messageId)).toBe('unknown');
      hookStatus = 204;

      const delivered = await until(
        () => attemptsOf(messageId).find((attempt) => attempt.status === 204),
        60_000,
        'the batch webhook delivered after the wipe',
      );
      expect(attemptsOf(messageId)[0]!.status).toBe(503);
      // The same message as the refused one: same webhook-id, signed with the key's secret, the finished batch.
      expect(independentlyVerified(signingSecret, delivered)).toBe(true);
      const event = JSON.parse(delivered.body) as { type: string; data: BatchData };
      expect(event.type).toBe('batch.completed');
      expect(event.data).toMatchObject({ batchId: accepted.batchId, status: 'completed', total: 2, counts: { succeeded: 2 } });
      await until(
        async () => ((await webhookState(svc, accepted.batchId)) === 'delivered' ? true : undefined),
        10_000,
        'the record to say delivered',
      );
    } finally {
      await queue.close();
      connection.disconnect();
      await svc.stop();
    }
  }, 120_000);

  it('a batch webhook whose last attempt failed is recorded as given up and is not queued again after Redis is emptied', async () => {
    // Six attempts over about 1.1 s.
    const prefix = 'batch-hook-gave-up';
    const { started: svc, client } = await service(prefix, 10);
    try {
      const accepted = await client.captureBulk({
        defaults: { viewportWidth: 100, viewportHeight: 100 },
        requests: [{ html: TINY(3) }],
        webhookUrl: `${fixtures.url}/refuse`,
      });
      const messageId = `msg_batch_${accepted.batchId}`;
      await until(
        async () => ((await webhookState(svc, accepted.batchId)) === 'gave_up' ? true : undefined),
        60_000,
        'the record to say gave_up',
      );
      expect(attemptsOf(messageId)).toHaveLength(WEBHOOK_ATTEMPTS);

      await admin.flushall();
      // The upkeep writes its marker back once it has put back what the wipe lost: that round is over.
      await until(
        async () => ((await admin.exists(`${prefix}:daguerre:queue-epoch`)) === 1 ? true : undefined),
        20_000,
        'the upkeep to see the wipe',
      );
      expect(await webhookState(svc, accepted.batchId)).toBe('gave_up');
    } finally {
      await svc.stop();
    }
  }, 120_000);
});
