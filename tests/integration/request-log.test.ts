import { randomBytes } from 'node:crypto';
import type { LoggedCapture } from '@daguerre/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { callTool, connectHttp } from '../helpers/mcp.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { captureQuery, startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECRET = `supersecret-${randomBytes(6).toString('hex')}`;
const PAGE = '<html><body style="margin:0;background:rgb(40,90,160)"><h1>logged</h1></body></html>';

interface LogAnswer {
  status: number;
  body: {
    success: boolean;
    data: { captures: LoggedCapture[]; nextCursor: string | null; retentionDays: number };
    error?: { code: string; details?: { field: string }[] };
  };
}

async function readLog(service: TestService, apiKey: string, query: Record<string, string> = {}): Promise<LogAnswer> {
  const response = await service.get(`/captures?${new URLSearchParams(query).toString()}`, { headers: { 'x-api-key': apiKey } });
  return { status: response.status, body: (await response.json()) as LogAnswer['body'] };
}

describe.each(DATABASE_KINDS)('the request log (GET /captures) on %s', (database) => {
  let service: TestService;
  let fixtures: FixtureServer;
  let secondKey: string;
  let secondKeyId: string;
  let firstKeyId: string;
  let brokeKey: string;
  const ids = {} as Record<'succeeded' | 'failed' | 'refused' | 'miss' | 'hit' | 'noCredits', string>;

  const capture = (params: Record<string, string | number | boolean>, apiKey = service.apiKey) =>
    service.get(`/capture?${captureQuery(params)}`, { headers: { 'x-api-key': apiKey } });

  beforeAll(async () => {
    fixtures = await new FixtureServer()
      .route('/page', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE))
      .start();
    service = await startTestService({ database, credits: 1000, env: { RATE_LIMIT_MAX: '1000' } });
    const { apiKeys, accounts } = service.runtime;
    firstKeyId = (await apiKeys.list(service.organizationId)).find((key) => key.name === 'test')!.id;
    const second = await apiKeys.create({ organizationId: service.organizationId, name: 'second key' });
    secondKey = second.key;
    secondKeyId = second.id;
    // An organization without credits: its capture is refused with 402 and logged as its own.
    const broke = await accounts.createOrganization(
      'Broke',
      await accounts.createPlan({ name: `broke-${randomBytes(4).toString('hex')}`, tier: 'test', creditsPerMonth: 0 }),
    );
    brokeKey = (await apiKeys.create({ organizationId: broke.id, name: 'broke' })).key;

    const succeeded = await capture({ url: `${fixtures.url}/page?token=${SECRET}&q=1`, viewportWidth: 320, viewportHeight: 200 });
    expect(succeeded.status).toBe(200);
    ids.succeeded = succeeded.headers.get('x-request-id')!;
    const failed = await capture({ url: `${fixtures.url}/missing`, failOnHttpError: true });
    expect(failed.status).toBe(502);
    ids.failed = failed.headers.get('x-request-id')!;
    const refused = await capture({ url: `${fixtures.url}/page`, format: 'bogus' }, secondKey);
    expect(refused.status).toBe(400);
    ids.refused = refused.headers.get('x-request-id')!;
    const miss = await capture({ html: PAGE, viewportWidth: 320, viewportHeight: 200, cacheEnabled: true }, secondKey);
    const hit = await capture({ html: PAGE, viewportWidth: 320, viewportHeight: 200, cacheEnabled: true }, secondKey);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    ids.miss = miss.headers.get('x-request-id')!;
    ids.hit = hit.headers.get('x-request-id')!;
    const noCredits = await capture({ html: PAGE }, brokeKey);
    expect(noCredits.status).toBe(402);
    ids.noCredits = noCredits.headers.get('x-request-id')!;
    // A refusal is written once its answer has gone out.
    await until(
      async () => ((await readLog(service, service.apiKey, { status: 'refused' })).body.data.captures.length > 0 ? true : undefined),
      10_000,
      'the refusal in the log',
    );
  });

  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  it('lists every capture of the organization newest first, with its outcome, key, target, cost and duration', async () => {
    const { status, body } = await readLog(service, service.apiKey);
    expect(status).toBe(200);
    const captures = body.data.captures;
    expect(captures.map((c) => c.requestId)).toEqual([ids.hit, ids.miss, ids.refused, ids.failed, ids.succeeded]);
    expect(body.data.retentionDays).toBe(30);
    const byId = new Map(captures.map((c) => [c.requestId, c]));
    expect(byId.get(ids.succeeded)).toMatchObject({
      status: 'succeeded',
      kind: 'sync',
      source: 'url',
      format: 'png',
      httpStatus: 200,
      errorCode: null,
      credits: 1,
      keyId: firstKeyId,
      keyName: 'test',
      target: `${fixtures.url}/page?token=[REDACTED]&q=1`,
    });
    expect(byId.get(ids.succeeded)!.durationMs).toBeGreaterThan(0);
    expect(byId.get(ids.succeeded)!.fileSize).toBeGreaterThan(100);
    expect(byId.get(ids.failed)).toMatchObject({
      status: 'failed',
      errorCode: 'TARGET_HTTP_ERROR',
      httpStatus: 502,
      credits: 0,
      fileSize: null,
    });
    expect(byId.get(ids.refused)).toMatchObject({
      status: 'refused',
      errorCode: 'VALIDATION_ERROR',
      httpStatus: 400,
      credits: 0,
      keyId: secondKeyId,
      format: 'invalid',
    });
    expect(byId.get(ids.miss)).toMatchObject({ status: 'succeeded', source: 'html', target: null, credits: 1 });
    expect(byId.get(ids.hit)).toMatchObject({ status: 'cached', source: 'html', target: null, credits: 0, httpStatus: 200 });
    for (const c of captures) expect(Date.parse(c.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(c.createdAt));
  });

  it('filters by status, key and time, and pages with a cursor without repeating or losing a row', async () => {
    expect((await readLog(service, service.apiKey, { status: 'failed' })).body.data.captures.map((c) => c.requestId)).toEqual([ids.failed]);
    expect((await readLog(service, service.apiKey, { status: 'cached' })).body.data.captures.map((c) => c.requestId)).toEqual([ids.hit]);
    expect((await readLog(service, service.apiKey, { keyId: secondKeyId })).body.data.captures.map((c) => c.requestId)).toEqual([
      ids.hit,
      ids.miss,
      ids.refused,
    ]);
    const all = (await readLog(service, service.apiKey)).body.data.captures;
    const refusedAt = all.find((c) => c.requestId === ids.refused)!.createdAt;
    const from = (await readLog(service, service.apiKey, { from: refusedAt })).body.data.captures.map((c) => c.requestId);
    expect(from).toEqual([ids.hit, ids.miss, ids.refused]);
    const to = (await readLog(service, service.apiKey, { to: refusedAt })).body.data.captures.map((c) => c.requestId);
    expect(to).toEqual([ids.failed, ids.succeeded]);

    const walked: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const answer: LogAnswer = await readLog(service, service.apiKey, { limit: '2', ...(cursor ? { cursor } : {}) });
      expect(answer.body.data.captures.length).toBeLessThanOrEqual(2);
      walked.push(...answer.body.data.captures.map((c) => c.requestId));
      cursor = answer.body.data.nextCursor;
      if (!cursor) break;
    }
    expect(walked).toEqual(all.map((c) => c.requestId));
  });

  it('answers bad filters with the error body naming each field and its valid values', async () => {
    const bad = await readLog(service, service.apiKey, { status: 'done', limit: '500', from: 'yesterday', keyId: 'abc' });
    expect(bad.status).toBe(400);
    expect(bad.body.error!.code).toBe('VALIDATION_ERROR');
    expect(bad.body.error!.details!.map((d) => d.field).sort()).toEqual(['from', 'keyId', 'limit', 'status']);
    expect(JSON.stringify(bad.body)).toContain('running, succeeded, cached, failed, refused');
    const cursor = await readLog(service, service.apiKey, { cursor: 'not-a-cursor' });
    expect(cursor.status).toBe(400);
    expect(cursor.body.error!.details!.map((d) => d.field)).toEqual(['cursor']);
  });

  it("shows one organization's captures to its keys only, and needs a key", async () => {
    const broke = await readLog(service, brokeKey);
    expect(broke.body.data.captures.map((c) => c.requestId)).toEqual([ids.noCredits]);
    expect(broke.body.data.captures[0]).toMatchObject({ status: 'refused', errorCode: 'INSUFFICIENT_CREDITS', httpStatus: 402 });
    expect((await readLog(service, service.apiKey)).body.data.captures.some((c) => c.requestId === ids.noCredits)).toBe(false);
    expect((await service.get('/captures')).status).toBe(401);
  });

  it('holds no secret: no query value the redaction masks, no API key', async () => {
    const rows = await service.runtime.db.knex('capture_ledger').select('*');
    const text = JSON.stringify(rows);
    expect(text).not.toContain(SECRET);
    for (const key of [service.apiKey, secondKey, brokeKey]) expect(text).not.toContain(key);
    expect(text).toContain('[REDACTED]');
  });

  it('labels MCP tool calls as mcp, and list_captures reads the log with the same filters', async () => {
    const mcp = await connectHttp(service.url, service.apiKey);
    try {
      const shot = await callTool(mcp, 'capture', { html: PAGE, viewportWidth: 320, viewportHeight: 200 });
      expect(shot.isError).toBeFalsy();
      const newest = (await readLog(service, service.apiKey, { limit: '1' })).body.data.captures[0]!;
      expect(newest).toMatchObject({ kind: 'mcp', status: 'succeeded', source: 'html' });
      const listed = await callTool(mcp, 'list_captures', { status: 'failed' });
      expect(listed.isError).toBeFalsy();
      const data = listed.structuredContent as { captures: LoggedCapture[] };
      expect(data.captures.map((c) => c.requestId)).toEqual([ids.failed]);
      const bad = await callTool(mcp, 'list_captures', { status: 'done' });
      expect(bad.isError).toBe(true);
    } finally {
      await mcp.close();
    }
  });
});

describe('the request log of queued captures', () => {
  let service: TestService;
  const prefix = `rs-test-log-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    service = await startTestService({
      credits: 100,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        CAPTURE_WORKERS: '2',
        RATE_LIMIT_MAX: '1000',
        STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('logs async jobs, batch items and MCP jobs each under its kind and its job id', async () => {
    const job = await service.client.captureAsync({ html: PAGE, viewportWidth: 320, viewportHeight: 200 });
    const batch = await service.client.captureBulk({
      defaults: { viewportWidth: 320, viewportHeight: 200 },
      requests: [{ html: PAGE }, { html: `${PAGE}<p>2</p>` }],
    });
    const mcp = await connectHttp(service.url, service.apiKey);
    let mcpJobId: string;
    try {
      const shot = await callTool(mcp, 'capture', { html: `${PAGE}<p>mcp</p>`, viewportWidth: 320, viewportHeight: 200 });
      expect(shot.isError).toBeFalsy();
      mcpJobId = (shot.structuredContent as { id: string }).id;
    } finally {
      await mcp.close();
    }
    await service.client.waitForCapture(job.jobId);
    await service.client.waitForBatch(batch.batchId);
    const log = await until(
      async () => {
        const captures = (await readLog(service, service.apiKey)).body.data.captures;
        return captures.filter((c) => c.status === 'succeeded').length >= 4 ? captures : undefined;
      },
      60_000,
      'four succeeded captures in the log',
    );
    expect(log.find((c) => c.jobId === job.jobId)).toMatchObject({ kind: 'async', status: 'succeeded', credits: 1 });
    const items = batch.items.map((item) => item.jobId);
    expect(log.filter((c) => c.jobId !== null && items.includes(c.jobId)).map((c) => c.kind)).toEqual(['batch', 'batch']);
    expect(log.find((c) => c.jobId === mcpJobId!)).toMatchObject({ kind: 'mcp', status: 'succeeded' });
  });

  it('logs a job refused by its worker before it reserved anything (a default storage the network policy refuses)', async () => {
    // Checked when the worker runs the job, not when it is queued: the job is accepted, then refused.
    await service.runtime.storageConfigs.create(service.organizationId, {
      name: 'private bucket',
      endpoint: 'http://10.255.255.1:9000',
      bucket: 'captures',
      accessKeyId: 'AKIATEST',
      secretAccessKey: 'not-a-real-secret',
      isDefault: true,
    });
    const job = await service.client.captureAsync({ html: PAGE, viewportWidth: 320, viewportHeight: 200 });
    const ended = await service.client.waitForCapture(job.jobId);
    expect(ended.status).toBe('failed');
    const logged = await until(
      async () => (await readLog(service, service.apiKey, { status: 'refused' })).body.data.captures.find((c) => c.jobId === job.jobId),
      10_000,
      'the refused job in the log',
    );
    expect(logged).toMatchObject({ kind: 'async', source: 'html', credits: 0, errorCode: ended.error!.code });
    expect(logged.httpStatus).toBeGreaterThanOrEqual(400);
  });
});
