import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaptureJobData } from '../../client/src/index.js';
import { WebhookQueue } from '../../server/src/jobs/webhook-delivery.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PAGE = '<body style="margin:0;background:#0a0">fair</body>';
const WEBHOOK_DEADLINE_MS = 2_500;
const PER_ORGANIZATION = 4;

/** docs/async-jobs.md, "Fair queue between organizations": one organization's backlog of jobs or of slow webhook receivers costs another about one job. */
describe('fair async queue and webhook delivery between organizations', () => {
  const prefix = `rs-test-${randomBytes(4).toString('hex')}`;
  const fixtures = new FixtureServer();
  let service: TestService;
  let other: { organizationId: string; apiKey: string; keyId: string };
  let ownKeyId: string;

  beforeAll(async () => {
    await fixtures.start();
    service = await startTestService({
      credits: 100,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        // One job at a time: the order the queue hands out is the order they run.
        CAPTURE_WORKERS: '1',
        RATE_LIMIT_MAX: '1000',
        SHUTDOWN_TIMEOUT_MS: '500',
        WEBHOOK_TIMEOUT_MS: String(WEBHOOK_DEADLINE_MS),
        WEBHOOK_RETRY_BASE_MS: '3600000',
        WEBHOOK_CONCURRENCY: '16',
        WEBHOOK_MAX_PER_ORGANIZATION: String(PER_ORGANIZATION),
      },
    });
    const plan = await service.runtime.accounts.createPlan({ name: `fair-${Date.now()}`, tier: 'test', creditsPerMonth: 100 });
    const org = await service.runtime.accounts.createOrganization('Other org', plan);
    const key = await service.runtime.apiKeys.create({ organizationId: org.id, name: 'other' });
    other = { organizationId: org.id, apiKey: key.key, keyId: key.id };
    ownKeyId = (await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'hooks' })).id;
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  async function post(apiKey: string, body: Record<string, unknown>): Promise<string> {
    const response = await service.get('/captures', {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ viewportWidth: 120, viewportHeight: 100, ...body }),
    });
    const answer = (await response.json()) as { data: { jobId: string } };
    expect(response.status, JSON.stringify(answer)).toBe(202);
    return answer.data.jobId;
  }
  const view = async (apiKey: string, jobId: string) =>
    ((await (await service.get(`/captures/${jobId}`, { headers: { 'x-api-key': apiKey } })).json()) as { data: CaptureJobData }).data;

  it("another organization's job runs next, not behind one organization's backlog of 16 slow jobs", async () => {
    const backlog: string[] = [];
    for (let i = 0; i < 16; i++) backlog.push(await post(service.apiKey, { html: PAGE, delay: 1000, viewportWidth: 120 + i }));
    // The backlog shows in the scaling signal, prioritized jobs included (a KEDA list trigger would read 0).
    const metrics = await (await service.get('/metrics')).text();
    const queued = Number(/^daguerre_async_jobs\{state="queued"\} (\d+)$/m.exec(metrics)?.[1]);
    const waiting = Number(/^daguerre_async_queue_waiting (\d+)$/m.exec(metrics)?.[1]);
    expect(queued).toBeGreaterThanOrEqual(14);
    expect(waiting).toBeGreaterThanOrEqual(13);
    await until(
      async () => ((await view(service.apiKey, backlog[0]!)).status === 'succeeded' ? true : undefined),
      60_000,
      'the first backlog job',
    );
    const posted = Date.now();
    const single = await post(other.apiKey, { html: PAGE });
    const done = await until(
      async () => {
        const job = await view(other.apiKey, single);
        return job.status === 'succeeded' ? job : undefined;
      },
      120_000,
      "the other organization's job",
    );
    const waited = Date.parse(done.startedAt!) - posted;
    const backlogViews = await Promise.all(backlog.map((id) => view(service.apiKey, id)));
    // Backlog jobs that started after the other organization's job was queued and before it started: at most the one already handed out.
    const overtaking = backlogViews.filter(
      (job) =>
        job.startedAt && Date.parse(job.startedAt) >= Date.parse(done.createdAt) && Date.parse(job.startedAt) < Date.parse(done.startedAt!),
    );
    expect(overtaking.length).toBeLessThanOrEqual(1);
    const stillQueued = backlogViews.filter((job) => job.status === 'queued').length;
    expect(stillQueued).toBeGreaterThan(8);
    const finished = backlogViews.filter((job) => job.finishedAt && job.startedAt);
    const jobMs =
      finished.reduce((sum, job) => sum + Date.parse(job.finishedAt!) - Date.parse(job.startedAt!), 0) / Math.max(1, finished.length);
    console.log(
      `[fair-async] other organization's job waited ${waited} ms to start behind a 16-job backlog (one backlog job takes ~${Math.round(jobMs)} ms); ${overtaking.length} backlog job(s) started in between, ${stillQueued} still queued`,
    );
  });

  it("another organization's webhook is delivered while 16 receivers of one organization drip their answers; each attempt ends at its total deadline", async () => {
    const open = new Set<number>();
    let opened = 0;
    let closed = 0;
    let mostOpen = 0;
    for (let i = 0; i < 16; i++) {
      fixtures.route(`/drip-${i}`, (req, res) => {
        req.resume();
        opened += 1;
        open.add(i);
        mostOpen = Math.max(mostOpen, open.size);
        // Answers at once, then a byte every 500 ms forever: an idle timeout never fires.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('.');
        const drip = setInterval(() => res.write('.'), 500);
        res.on('close', () => {
          clearInterval(drip);
          open.delete(i);
          closed += 1;
        });
      });
    }
    let arrived: { at: number; closedBefore: number; openedBefore: number } | undefined;
    fixtures.route('/hook', (req, res) => {
      req.resume();
      arrived ??= { at: Date.now(), closedBefore: closed, openedBefore: opened };
      res.writeHead(204).end();
    });
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const webhooks = new WebhookQueue(connection, {
      prefix,
      retryBaseMs: 3_600_000,
      timeoutMs: WEBHOOK_DEADLINE_MS,
      retentionSeconds: 600,
      concurrency: 16,
      perOrganization: PER_ORGANIZATION,
    });
    try {
      for (let i = 0; i < 16; i++) {
        await webhooks.enqueue({
          url: `${fixtures.url}/drip-${i}`,
          keyId: ownKeyId,
          organizationId: service.organizationId,
          messageId: `msg_drip_${prefix}_${i}`,
          body: '{"flood":true}',
        });
      }
      await until(() => (open.size >= PER_ORGANIZATION ? true : undefined), 30_000, 'the flood to hold its deliveries');
      const sent = Date.now();
      await webhooks.enqueue({
        url: `${fixtures.url}/hook`,
        keyId: other.keyId,
        organizationId: other.organizationId,
        messageId: `msg_other_${prefix}`,
        body: '{"other":true}',
      });
      const delivery = await until(() => arrived, 30_000, "the other organization's webhook");
      // It did not wait for the flood: at most one round of the flood's attempts had ended.
      expect(delivery.closedBefore).toBeLessThanOrEqual(PER_ORGANIZATION);
      // Every dripping receiver is cut off by the total deadline (the drip alone would never end).
      await until(() => (closed >= 16 ? true : undefined), 120_000, 'every flood attempt to reach its deadline');
      expect(mostOpen).toBeLessThanOrEqual(PER_ORGANIZATION);
      console.log(
        `[fair-async] other organization's webhook delivered ${delivery.at - sent} ms after it was queued; ${delivery.openedBefore} flood attempts had started and ${delivery.closedBefore} had ended by then; at most ${mostOpen} flood connections open at once`,
      );
    } finally {
      await webhooks.queue.obliterate({ force: true }).catch(() => undefined);
      await webhooks.close();
      connection.disconnect();
    }
  });
});
