import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, verifyWebhook, type CaptureJobData } from '../../client/src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { type Delivery, independentlyVerified } from '../helpers/webhooks.js';
import { until } from '../helpers/until.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TINY_HTML = '<body style="margin:0;background:#0a0"><p>async</p></body>';

/** A prefix of the test's own in the shared Redis, removed afterwards. */
const newPrefix = () => `rs-test-${randomBytes(4).toString('hex')}`;

const dropPrefix = (prefix: string) => deleteKeysWithPrefix(REDIS_URL, prefix);

/** A webhook receiver on loopback (allow-listed like every fixture server) that records what it gets. */
async function startReceiver(answer: (count: number) => number = () => 200) {
  const deliveries: Delivery[] = [];
  const server = new FixtureServer().route('/hook', (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body });
      res.statusCode = answer(deliveries.length);
      res.end();
    });
  });
  await server.start();
  return { server, deliveries, url: `${server.url}/hook` };
}

async function postJob(service: TestService, apiKey: string, body: Record<string, unknown>) {
  const response = await service.get('/captures', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      success: boolean;
      data: { jobId: string; statusUrl: string };
      error?: { code: string; message: string };
    },
  };
}

/** A `daguerre worker` process of its own, on the service's database and Redis prefix. */
function startWorkerProcess(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['server/bin/daguerre.js', 'worker'], {
    cwd: ROOT,
    env: { ...process.env, WORKER_PORT: '0', LOG_LEVEL: 'warn', MAX_CONCURRENCY: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', () => undefined);
  child.stdout!.on('data', () => undefined);
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('async captures (POST /captures) with an in-process worker', () => {
  let service: TestService;
  let signingSecret: string;
  let apiKey: string;
  const prefix = newPrefix();
  beforeAll(async () => {
    service = await startTestService({
      credits: 20,
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1', WEBHOOK_RETRY_BASE_MS: '300', WEBHOOK_TIMEOUT_MS: '2000' },
    });
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'async' });
    apiKey = key.key;
    signingSecret = key.signingSecret;
  });
  afterAll(async () => {
    await service?.stop();
    await dropPrefix(prefix);
  });

  it('queues a job, renders it, serves its file and calls the webhook with a valid Standard Webhooks signature', async () => {
    const receiver = await startReceiver();
    try {
      const accepted = await postJob(service, apiKey, {
        html: TINY_HTML,
        viewportWidth: 200,
        viewportHeight: 120,
        webhookUrl: receiver.url,
      });
      expect(accepted.body).toMatchObject({ success: true, data: { status: 'queued' } });
      expect(accepted.status).toBe(202);
      expect(accepted.body.data.statusUrl).toBe(`${service.url}/captures/${accepted.body.data.jobId}`);
      const { jobId } = accepted.body.data;

      const client = createClient({ baseUrl: service.url, apiKey });
      await client.waitForCapture(jobId, { intervalMs: 100, timeoutMs: 30_000 });
      // The finish time can land a moment after the state: poll until the record is complete.
      const done = await until(
        async () => {
          const job = await client.getCapture(jobId);
          return job.finishedAt ? job : undefined;
        },
        5_000,
        'finishedAt',
      );
      expect(done.status).toBe('succeeded');
      expect(done.startedAt).toBeDefined();
      expect(done.result).toMatchObject({ mime: 'image/png', fileUrl: `${service.url}/captures/${jobId}/file` });

      const file = await client.getCaptureFile(jobId);
      expect(file.contentType).toBe('image/png');
      expect(file.bytes.length).toBe(done.result!.fileSize);
      const png = decodePng(Buffer.from(file.bytes));
      expect([png.width, png.height]).toEqual([200, 120]);
      expect(file.headers['content-disposition']).toContain(done.result!.fileName);

      const delivery = await until(async () => receiver.deliveries[0], 15_000, 'the webhook');
      expect(independentlyVerified(signingSecret, delivery)).toBe(true);
      expect(independentlyVerified('another secret', delivery)).toBe(false);
      const event = JSON.parse(delivery.body) as { type: string; data: CaptureJobData };
      expect(event.type).toBe('capture.succeeded');
      expect(event.data).toMatchObject({
        jobId,
        status: 'succeeded',
        result: { fileName: done.result!.fileName, fileSize: done.result!.fileSize },
      });
      // The client's verifier agrees with the independent one, and refuses a tampered body.
      const verified = verifyWebhook(signingSecret, delivery.body, delivery.headers as Record<string, string>);
      expect(verified.type === 'capture.succeeded' && verified.data.jobId).toBe(jobId);
      expect(() =>
        verifyWebhook(signingSecret, delivery.body.replace('succeeded', 'failed'), delivery.headers as Record<string, string>),
      ).toThrow();

      // Charged once, as an async row of the ledger.
      const ledger = await service.runtime.credits.ledger(service.organizationId);
      const row = ledger.find((entry) => entry.request_id === jobId);
      expect(row).toMatchObject({ status: 'charged', mode: 'async' });
    } finally {
      await receiver.server.stop();
    }
  });

  it('delivers again after the receiver answered 500, under the same webhook-id', async () => {
    const receiver = await startReceiver((count) => (count === 1 ? 500 : 204));
    try {
      const accepted = await postJob(service, apiKey, {
        html: TINY_HTML,
        viewportWidth: 100,
        viewportHeight: 100,
        webhookUrl: receiver.url,
      });
      expect(accepted.status).toBe(202);
      await until(async () => (receiver.deliveries.length >= 2 ? true : undefined), 20_000, 'the second delivery');
      const [first, second] = receiver.deliveries;
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(second!.body).toBe(first!.body);
      expect(independentlyVerified(signingSecret, second!)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(receiver.deliveries).toHaveLength(2);
    } finally {
      await receiver.server.stop();
    }
  });

  it('reports a failed job with the error a synchronous capture gives, charges nothing, and calls capture.failed', async () => {
    const receiver = await startReceiver();
    try {
      const before = await service.client.usage();
      const accepted = await postJob(service, apiKey, {
        html: '<p>x</p>',
        waitForSelector: '#never',
        delay: 0,
        webhookUrl: receiver.url,
        viewportWidth: 100,
        viewportHeight: 100,
      });
      expect(accepted.status).toBe(202);
      const client = createClient({ baseUrl: service.url, apiKey });
      const done = await client.waitForCapture(accepted.body.data.jobId, { intervalMs: 200, timeoutMs: 40_000 });
      expect(done.status).toBe('failed');
      expect(done.error?.code).toMatch(/^[A-Z_]+$/);
      expect(done.result).toBeUndefined();
      const after = await service.client.usage();
      expect(after.credits.usedThisPeriod).toBe(before.credits.usedThisPeriod);
      const file = await service.get(`/captures/${accepted.body.data.jobId}/file`, { headers: { 'x-api-key': apiKey } });
      expect(file.status).toBe(409);
      const delivery = await until(async () => receiver.deliveries[0], 15_000, 'the failure webhook');
      expect(JSON.parse(delivery.body)).toMatchObject({
        type: 'capture.failed',
        data: { status: 'failed', error: { code: done.error!.code } },
      });
    } finally {
      await receiver.server.stop();
    }
  });

  it('validates exactly as /capture does, synchronously, and refuses a webhook on a private address', async () => {
    const both = await postJob(service, apiKey, { html: TINY_HTML, url: 'https://example.com' });
    const sync = await service.get('/capture', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ html: TINY_HTML, url: 'https://example.com' }),
    });
    expect(both.status).toBe(400);
    expect(both.body).toEqual(await sync.json());

    const returnFile = await postJob(service, apiKey, { html: TINY_HTML, returnFile: false });
    expect(returnFile.status).toBe(400);

    // 10.0.0.1 is not a fixture server: the network policy refuses it before anything is queued.
    const privateHook = await postJob(service, apiKey, { html: TINY_HTML, webhookUrl: 'http://10.0.0.1:8080/hook' });
    expect(privateHook.status).toBe(400);
    expect(privateHook.body.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(privateHook.body.error!.message).toContain('webhookUrl');
    const loopbackHook = await postJob(service, apiKey, { html: TINY_HTML, webhookUrl: 'http://127.0.0.1:9/hook' });
    expect(loopbackHook.status).toBe(400);
  });

  it('shows a job to its own organization only: another organization gets 404 for the job and its file', async () => {
    const accepted = await postJob(service, apiKey, { html: TINY_HTML, viewportWidth: 100, viewportHeight: 100 });
    const { jobId } = accepted.body.data;
    await createClient({ baseUrl: service.url, apiKey }).waitForCapture(jobId, { intervalMs: 100, timeoutMs: 30_000 });
    const plan = await service.runtime.accounts.createPlan({ name: `other-${Date.now()}`, tier: 'test', creditsPerMonth: 10 });
    const other = await service.runtime.accounts.createOrganization('Other org', plan);
    const otherKey = await service.runtime.apiKeys.create({ organizationId: other.id, name: 'other' });
    for (const path of [`/captures/${jobId}`, `/captures/${jobId}/file`, '/captures/not-a-job']) {
      const response = await service.get(path, { headers: { 'x-api-key': otherKey.key } });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    }
    const anonymous = await service.get(`/captures/${jobId}`);
    expect(anonymous.status).toBe(401);
  });
});

describe('async captures without REDIS_URL', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: {} });
  });
  afterAll(async () => service?.stop());

  it('answers 503 naming REDIS_URL, while /capture works as before', async () => {
    const refused = await postJob(service, service.apiKey, { html: TINY_HTML });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(refused.body.error!.message).toContain('REDIS_URL');
    const sync = await service.get(
      `/capture?html=${encodeURIComponent(TINY_HTML)}&viewportWidth=100&viewportHeight=100&apiKey=${service.apiKey}`,
    );
    expect(sync.status).toBe(200);
  });
});

describe('render workers in processes of their own (daguerre worker)', () => {
  let service: TestService;
  let database: TestDatabase;
  const prefix = newPrefix();
  const children: ChildProcess[] = [];
  const resultsDir = mkdtempSync(join(tmpdir(), 'daguerre-results-'));
  beforeAll(async () => {
    database = await createTestDatabase('mysql');
    // The API takes requests only: CAPTURE_WORKERS=0.
    service = await startTestService({
      databaseUrl: database.url,
      credits: 3,
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '0', RESULTS_DIR: resultsDir },
    });
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await service?.stop();
    await database?.drop();
    await dropPrefix(prefix);
    rmSync(resultsDir, { recursive: true, force: true });
  });

  const workerEnv = () => ({
    DATABASE_URL: database.url,
    REDIS_URL,
    JOB_QUEUE_PREFIX: prefix,
    CAPTURE_WORKERS: '1',
    JOB_LOCK_MS: '3000',
    RESULTS_DIR: resultsDir,
  });

  it('a job queued while no worker runs is done by a worker started afterwards; a job out of credits fails INSUFFICIENT_CREDITS', async () => {
    const client = createClient({ baseUrl: service.url, apiKey: service.apiKey });
    await service.runtime.credits.grant(service.organizationId, -2); // 1 credit left
    const first = await postJob(service, service.apiKey, { html: TINY_HTML, viewportWidth: 100, viewportHeight: 100 });
    const second = await postJob(service, service.apiKey, { html: TINY_HTML, viewportWidth: 101, viewportHeight: 100 });
    expect([first.status, second.status]).toEqual([202, 202]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await client.getCapture(first.body.data.jobId)).status).toBe('queued');

    const worker = startWorkerProcess(workerEnv());
    children.push(worker);
    const done = await client.waitForCapture(first.body.data.jobId, { intervalMs: 200, timeoutMs: 60_000 });
    expect(done.status).toBe('succeeded');
    const starved = await client.waitForCapture(second.body.data.jobId, { intervalMs: 200, timeoutMs: 30_000 });
    expect(starved.status).toBe('failed');
    expect(starved.error?.code).toBe('INSUFFICIENT_CREDITS');
    // The file is read through the API instance, from the shared result store.
    expect((await client.getCaptureFile(first.body.data.jobId)).bytes.length).toBe(done.result!.fileSize);
    // With 0 credits left, a new job is refused up front.
    const refused = await postJob(service, service.apiKey, { html: TINY_HTML });
    expect(refused.status).toBe(402);
    worker.kill('SIGTERM');
    await exited(worker);
  });

  it('a worker SIGKILLed mid-job leaves the job to another worker, and it is charged once', async () => {
    await service.runtime.credits.grant(service.organizationId, 5);
    const client = createClient({ baseUrl: service.url, apiKey: service.apiKey });
    const before = await client.usage();
    const testStarted = Date.now();
    const doomed = startWorkerProcess(workerEnv());
    children.push(doomed);
    // A capture that takes a few seconds (delay), so that the worker dies in the middle of it.
    const accepted = await postJob(service, service.apiKey, { html: TINY_HTML, viewportWidth: 100, viewportHeight: 100, delay: 4000 });
    const { jobId } = accepted.body.data;
    await until(async () => ((await client.getCapture(jobId)).status === 'active' ? true : undefined), 60_000, 'the job to start');
    // Its credit is reserved by now (the render waits in its delay).
    await until(
      async () => ((await client.usage()).credits.remaining === before.credits.remaining - 1 ? true : undefined),
      10_000,
      'the reservation',
    );
    doomed.kill('SIGKILL');
    await exited(doomed);

    const rescuer = startWorkerProcess(workerEnv());
    children.push(rescuer);
    const done = await client.waitForCapture(jobId, { intervalMs: 250, timeoutMs: 90_000 });
    expect(done.status).toBe('succeeded');
    const after = await client.usage();
    expect(after.credits.usedThisPeriod).toBe(before.credits.usedThisPeriod + 1);
    expect(after.credits.remaining).toBe(before.credits.remaining - 1);
    // Two attempts in the ledger: the dead worker's reservation released, the rescuer's charged.
    const mine = (await service.runtime.credits.ledger(service.organizationId)).filter((row) => Number(row.created_at) >= testStarted);
    expect(mine.map((row) => `${row.mode}:${row.status}:${row.error_code ?? ''}`).sort()).toEqual([
      'async:charged:',
      'async:released:JOB_TAKEN_OVER',
    ]);
    expect(mine.find((row) => row.status === 'released')!.request_id).toBe(jobId);
    rescuer.kill('SIGTERM');
    await exited(rescuer);
  });
});
