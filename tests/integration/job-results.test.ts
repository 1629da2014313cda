import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index.js';
import { AsyncCaptureBodySchema } from '../../contract/src/index.js';
import { signQuery } from '../../server/src/security/signing.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PAGE = '<body style="margin:0;background:rgb(40,160,110)">result</body>';

const dropPrefix = (prefix: string) => deleteKeysWithPrefix(REDIS_URL, prefix);

async function postJob(service: TestService, body: Record<string, unknown>): Promise<string> {
  const response = await service.get('/captures', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
    body: JSON.stringify({ viewportWidth: 150, viewportHeight: 100, ...body }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { data: { jobId: string } }).data.jobId;
}

/** docs/async-jobs.md: results in object storage (a local directory by default), with retention and a sweeper. */
describe('async results in the results directory: streamed, kept for the retention time, then swept', () => {
  const prefix = `rs-test-${randomBytes(4).toString('hex')}`;
  const resultsDir = mkdtempSync(join(tmpdir(), 'daguerre-results-'));
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1', RESULTS_DIR: resultsDir } });
  });
  afterAll(async () => {
    await service?.stop();
    await dropPrefix(prefix);
    rmSync(resultsDir, { recursive: true, force: true });
  });

  it('writes the file under the results directory, streams it from there, and the sweeper removes it and the record after the retention time', async () => {
    const jobId = await postJob(service, { html: PAGE });
    const client = createClient({ baseUrl: service.url, apiKey: service.apiKey });
    const done = await client.waitForCapture(jobId, { intervalMs: 100, timeoutMs: 60_000 });
    expect(done.status).toBe('succeeded');
    expect(done.creditsCharged).toBe(1);
    expect(readdirSync(join(resultsDir, jobId))).toHaveLength(1);
    const file = await service.get(`/captures/${jobId}/file`, { headers: { 'x-api-key': service.apiKey } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-length')).toBe(String(done.result!.fileSize));
    expect((await file.arrayBuffer()).byteLength).toBe(done.result!.fileSize);
    // HEAD answers the file's headers and no body (no render, nothing to charge: the file exists).
    const head = await service.get(`/captures/${jobId}/file`, { method: 'HEAD', headers: { 'x-api-key': service.apiKey } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(done.result!.fileSize));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    // Redis holds no copy of the file or the record: the queue entry is gone once the job ended.
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*${jobId}*`);
    redis.disconnect();
    expect(keys).toEqual([]);

    // The scaling signal the deployment reads (KEDA cannot see BullMQ's prioritized set): counted in the database.
    const metrics = await (await service.get('/metrics')).text();
    expect(metrics).toMatch(/^daguerre_async_jobs\{state="queued"\} 0$/m);
    expect(metrics).toMatch(/^daguerre_async_jobs\{state="active"\} 0$/m);
    expect(metrics).toMatch(/^daguerre_async_queue_waiting 0$/m);

    // Past its retention time (set back in the record), the sweeper takes the file and the record.
    await service.runtime.db
      .knex('capture_jobs')
      .where('id', jobId)
      .update({ expires_at: Date.now() - 1 });
    await service.runtime.jobs.upkeep!.sweep();
    expect(existsSync(join(resultsDir, jobId))).toBe(false);
    const gone = await service.get(`/captures/${jobId}`, { headers: { 'x-api-key': service.apiKey } });
    expect(gone.status).toBe(404);
    // The charge stays in the ledger.
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(1);
  });
  it('the upkeep queues again a job whose queue entry is gone, and deletes a record whose POST never answered 202', async () => {
    const repository = service.runtime.jobs.repository!;
    const old = Date.now() - 10 * 60_000;
    const payload = {
      organizationId: service.organizationId,
      keyId: 'none',
      options: AsyncCaptureBodySchema.parse({ html: PAGE, viewportWidth: 150, viewportHeight: 100 }),
      baseUrl: service.url,
    };
    // Acknowledged (202 sent), but its queue entry is gone, as after a Redis restarted empty.
    const lost = '00000000-0000-4000-8000-0000000000a1';
    await repository.create(
      {
        id: lost,
        organizationId: service.organizationId,
        apiKeyId: null,
        payload: JSON.stringify(payload),
        hasSecrets: false,
        baseUrl: service.url,
      },
      old,
    );
    await repository.markEnqueued(lost);
    // Never acknowledged: the API instance died between the record and the queue entry.
    const orphan = '00000000-0000-4000-8000-0000000000a2';
    await repository.create(
      {
        id: orphan,
        organizationId: service.organizationId,
        apiKeyId: null,
        payload: JSON.stringify(payload),
        hasSecrets: false,
        baseUrl: service.url,
      },
      old,
    );
    // Acknowledged with secrets in its options: they were only in Redis, so it cannot be rebuilt.
    const secret = '00000000-0000-4000-8000-0000000000a3';
    await repository.create(
      {
        id: secret,
        organizationId: service.organizationId,
        apiKeyId: null,
        payload: JSON.stringify(payload),
        hasSecrets: true,
        baseUrl: service.url,
      },
      old,
    );
    await repository.markEnqueued(secret);
    const usedBefore = (await service.client.usage()).credits.usedThisPeriod;

    await service.runtime.jobs.upkeep!.reconcile();
    expect(await repository.get(orphan)).toBeUndefined();
    const failed = await repository.get(secret);
    expect(failed).toMatchObject({ status: 'failed', creditsCharged: 0, error: { code: 'SERVICE_UNAVAILABLE' } });
    expect(failed!.error!.message).toMatch(/nothing was charged/);
    const client = createClient({ baseUrl: service.url, apiKey: service.apiKey });
    const done = await client.waitForCapture(lost, { intervalMs: 100, timeoutMs: 60_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(usedBefore + 1);
  });
});

describe('async results in the deployment bucket (RESULTS_S3_*)', () => {
  const prefix = `rs-test-${randomBytes(4).toString('hex')}`;
  let s3: TestS3;
  let service: TestService;
  beforeAll(async () => {
    s3 = await startS3({ bucket: 'results' });
    service = await startTestService({
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        CAPTURE_WORKERS: '1',
        RESULTS_S3_ENDPOINT: s3.endpoint,
        RESULTS_S3_BUCKET: s3.bucket,
        RESULTS_S3_ACCESS_KEY_ID: s3.accessKeyId,
        RESULTS_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await s3?.stop();
    await dropPrefix(prefix);
  });

  it('stores the file in the bucket and streams it back byte for byte', async () => {
    const jobId = await postJob(service, { html: PAGE });
    const client = createClient({ baseUrl: service.url, apiKey: service.apiKey });
    const done = await client.waitForCapture(jobId, { intervalMs: 100, timeoutMs: 60_000 });
    expect(done.status).toBe('succeeded');
    const keys = await s3.listKeys();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^daguerre-results/${jobId}/[0-9a-f-]{36}\\.png$`));
    const stored = await s3.getObject(keys[0]!);
    const file = await client.getCaptureFile(jobId);
    expect(Buffer.from(file.bytes).equals(stored.bytes)).toBe(true);
  });
});

/** docs/async-jobs.md: a HEAD (a link previewer probing a capture link) renders nothing and charges nothing. */
describe('HEAD on /capture', () => {
  let service: TestService;
  const fixtures = new FixtureServer();
  beforeAll(async () => {
    await fixtures.start();
    fixtures.page('/probe', PAGE);
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures.stop();
  });

  it('answers 405 with Allow: GET, POST, for a key and for a signed link, without loading the page or charging', async () => {
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'signed' });
    const target = `${fixtures.url}/probe`;
    const query = new URLSearchParams({ url: target, viewportWidth: '150', viewportHeight: '100', keyId: key.id }).toString();
    const signed = `/capture?${query}&signature=${signQuery(key.signingSecret, query)}`;
    const withKey = `/capture?${new URLSearchParams({ url: target, apiKey: service.apiKey })}`;
    fixtures.reset();
    for (const path of [signed, withKey]) {
      const response = await service.get(path, { method: 'HEAD' });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, POST');
    }
    expect(fixtures.requestsTo('/probe')).toHaveLength(0);
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(0);
    expect(await service.runtime.credits.ledger(service.organizationId)).toEqual([]);
    // The same signed link with GET renders and charges once.
    const rendered = await service.get(signed);
    expect(rendered.status).toBe(200);
    expect(fixtures.requestsTo('/probe')).toHaveLength(1);
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(1);
  });
});
