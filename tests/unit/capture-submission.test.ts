import { AsyncCaptureBodySchema, type AsyncCaptureOptions, type BatchData } from '@daguerre/contract';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../server/src/errors.js';
import { egressPolicy } from '../../server/src/security/address-policy.js';
import { assertUrlAllowed } from '../../server/src/security/target-policy.js';
import type { AuthenticatedKey } from '../../server/src/services/api-keys.js';
import { CaptureSubmission } from '../../server/src/services/capture-submission.js';
import type { CaptureJobPayload, NewBatch } from '../../server/src/services/queued-capture.js';
import { AccountsRepository, type PlanRow } from '../../server/src/store/accounts-repository.js';
import { CreditRepository, type LedgerEntry } from '../../server/src/store/credit-repository.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';

/**
 * The one acceptance of /capture, POST /captures and POST /captures/bulk (services/capture-submission.ts),
 * on a real SQLite database and the real egress policy (a stub resolver stands in for DNS).
 */
const PER_CAPTURE = 2;
const DAY = 24 * 3600_000;

/** 10.0.0.1 is private: refused by the policy without ALLOW_PRIVATE_NETWORK. */
const resolve = async (host: string) => (host === 'intranet.test' ? ['10.0.0.1'] : ['93.184.216.34']);
const checkDestination = (field: string, url: string) =>
  assertUrlAllowed(egressPolicy({ ALLOW_PRIVATE_NETWORK: false, EGRESS_ALLOW_LIST: [] }), resolve, field, url);

const options = (body: Record<string, unknown>): AsyncCaptureOptions => AsyncCaptureBodySchema.parse(body);

/** The error a promise rejects with, as the HTTP layer answers it. */
async function refusal(work: Promise<unknown>): Promise<{ status: number; body: unknown; retryAfter: number | undefined }> {
  const error = await work.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return { status: error.status, body: error.toBody(), retryAfter: error.options.retryAfterSeconds };
}

describe('CaptureSubmission: one acceptance for sync, async and bulk captures', () => {
  let db: Database;
  let accounts: AccountsRepository;
  let credits: CreditRepository;
  let plan: PlanRow;
  let queued: CaptureJobPayload[];
  let batches: NewBatch[];
  let submission: CaptureSubmission;
  let requests = 0;

  const jobs = { enqueue: async (payload: CaptureJobPayload) => (queued.push(payload), `job-${queued.length}`) };
  const batchQueue = { create: async (batch: NewBatch) => (batches.push(batch), { batchId: `batch-${batches.length}` } as BatchData) };

  const keyOf = async (remaining: number, createdAt = Date.now()): Promise<AuthenticatedKey> => {
    const org = await accounts.createOrganization(`org-${++requests}`, plan, createdAt);
    await db.knex('credit_balances').where('organization_id', org.id).update({ remaining });
    return { keyId: `key-${requests}`, organizationId: org.id, userId: null, membershipActive: true };
  };
  const entryOf = (key: AuthenticatedKey): LedgerEntry => ({
    requestId: `req-${++requests}`,
    organizationId: key.organizationId!,
    apiKeyId: key.keyId,
    format: 'png',
    source: 'url',
    targetHost: 'example.com',
    userAgent: null,
  });
  const balanceOf = async (key: AuthenticatedKey) => (await credits.balance(key.organizationId!))!;

  beforeAll(async () => {
    db = openDatabase('sqlite::memory:');
    await migrate(db);
    accounts = new AccountsRepository(db);
    credits = new CreditRepository(db);
    plan = await accounts.createPlan({ name: 'submission', tier: 'test', creditsPerMonth: 10 });
    submission = new CaptureSubmission({ credits, creditsPerCapture: PER_CAPTURE, checkDestination }).withQueues({
      jobs,
      batches: batchQueue,
    });
  });
  afterAll(async () => db?.close());
  beforeEach(() => {
    queued = [];
    batches = [];
  });

  it('refuses a capture short of credits with the same 402 body in sync and async, and a bulk with its own message; nothing is queued', async () => {
    const key = await keyOf(1);
    const capture = options({ url: 'https://example.com/' });
    const sync = await refusal(submission.reserve(entryOf(key), submission.costOf(capture)));
    const async = await refusal(submission.submitJob({ key, body: capture, baseUrl: 'http://api.test', kind: 'async' }));
    expect(sync.status).toBe(402);
    expect(async).toEqual(sync);
    expect(sync.body).toEqual({
      success: false,
      error: { code: 'INSUFFICIENT_CREDITS', message: 'Not enough credits: this capture costs 2, 1 remaining in the current period' },
    });
    const bulk = await refusal(submission.submitBatch({ key, items: [capture, capture], baseUrl: 'http://api.test' }));
    expect(bulk.status).toBe(402);
    expect(bulk.body).toEqual({
      success: false,
      error: {
        code: 'INSUFFICIENT_CREDITS',
        message: 'Not enough credits: this batch costs up to 4, 1 remaining in the current period; nothing was queued',
      },
    });
    expect(queued).toEqual([]);
    expect(batches).toEqual([]);
    // Nothing reserved by any of them.
    expect(await balanceOf(key)).toMatchObject({ remaining: 1, reserved: 0 });
  });

  it('opens the new billing period before checking the balance: a spent organization whose period ended is accepted everywhere', async () => {
    // Created 40 days ago and spent: its first period ended about 10 days ago.
    const key = await keyOf(0, Date.now() - 40 * DAY);
    const before = await balanceOf(key);
    expect(before.period_end).toBeLessThan(Date.now());

    const jobId = await submission.submitJob({
      key,
      body: options({ url: 'https://example.com/' }),
      baseUrl: 'http://api.test',
      kind: 'async',
    });
    expect(jobId).toBe('job-1');
    const rolled = await balanceOf(key);
    expect(rolled.period_start).toBe(before.period_end);
    expect(rolled.period_end).toBeGreaterThan(Date.now());
    // The plan has no rollover: the new period holds exactly its allocation, and a job reserves nothing when queued.
    expect(rolled).toMatchObject({ allocation: 10, carried_over: 0, remaining: 10, reserved: 0 });

    await submission.submitBatch({ key, items: [options({ url: 'https://example.com/a' })], baseUrl: 'http://api.test' });
    expect(batches).toHaveLength(1);
    await submission.reserve(entryOf(key), PER_CAPTURE);
    expect(await balanceOf(key)).toMatchObject({ remaining: 8, reserved: 2 });
  });

  it('checks in the order of today: a request refused for its destination and its credits gets the destination error', async () => {
    const key = await keyOf(0);
    const refused = options({ url: 'https://intranet.test/' });
    const destination = {
      success: false,
      error: {
        code: 'INVALID_INPUT',
        message: 'url: the destination is not allowed (only public internet addresses can be reached)',
        details: [{ field: 'url', message: 'the destination is not allowed', value: null }],
      },
    };
    expect((await refusal(submission.precheck({ key, options: refused }))).body).toEqual(destination);
    expect((await refusal(submission.submitJob({ key, body: refused, baseUrl: 'http://api.test', kind: 'async' }))).body).toEqual(
      destination,
    );
    // The job's webhook is checked after the capture's own options, before the credits.
    const webhook = await refusal(
      submission.submitJob({
        key,
        body: options({ url: 'https://example.com/', webhookUrl: 'https://intranet.test/hook' }),
        baseUrl: 'http://api.test',
        kind: 'async',
      }),
    );
    expect(webhook.body).toMatchObject({ error: { code: 'INVALID_INPUT', message: expect.stringMatching(/^webhookUrl: /) } });
    // A bulk names the item and its field.
    const bulk = await refusal(
      submission.submitBatch({ key, items: [options({ url: 'https://example.com/' }), refused], baseUrl: 'http://api.test' }),
    );
    expect(bulk.body).toEqual({
      success: false,
      error: {
        code: 'INVALID_INPUT',
        message: 'requests[1]: url: the destination is not allowed (only public internet addresses can be reached)',
        details: [{ field: 'requests[1].url', message: 'the destination is not allowed', value: null }],
      },
    });
    expect(queued).toEqual([]);
  });

  it('answers 503 first when there is no queue (no REDIS_URL), whatever else is wrong with the request', async () => {
    const sync = new CaptureSubmission({ credits, creditsPerCapture: PER_CAPTURE, checkDestination });
    const noOrganization: AuthenticatedKey = { keyId: 'k', organizationId: null, userId: null, membershipActive: true };
    const job = await refusal(
      sync.submitJob({ key: noOrganization, body: options({ url: 'https://intranet.test/' }), baseUrl: 'http://api.test', kind: 'async' }),
    );
    expect(job).toMatchObject({
      status: 503,
      retryAfter: 300,
      body: { error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/^Async captures need a Redis server/) } },
    });
    const bulk = await refusal(sync.submitBatch({ key: noOrganization, items: [], baseUrl: 'http://api.test' }));
    expect(bulk).toMatchObject({
      status: 503,
      retryAfter: undefined,
      body: { error: { message: expect.stringMatching(/^Bulk captures need a Redis server/) } },
    });
    // With a queue, a key without an organization is the next answer.
    const next = await refusal(
      submission.submitJob({
        key: noOrganization,
        body: options({ url: 'https://intranet.test/' }),
        baseUrl: 'http://api.test',
        kind: 'async',
      }),
    );
    expect(next.body).toEqual({
      success: false,
      error: { code: 'NO_ORGANIZATION_CONTEXT', message: 'This API key belongs to no organization' },
    });
  });

  it('hands an accepted job to the queue with what the worker needs', async () => {
    const key = { ...(await keyOf(10)), fairShare: { maxSharePercent: null, weight: 2 } };
    const body = options({ url: 'https://example.com/', webhookUrl: 'https://example.com/hook' });
    await submission.submitJob({ key, body, baseUrl: 'http://api.test', kind: 'mcp' });
    const { webhookUrl: _hook, ...captureOptions } = body;
    expect(queued).toEqual([
      {
        organizationId: key.organizationId,
        keyId: key.keyId,
        options: captureOptions,
        baseUrl: 'http://api.test',
        kind: 'mcp',
        fairShare: key.fairShare,
        webhookUrl: 'https://example.com/hook',
      },
    ]);
  });

  it('answers 503 "nothing was queued" when the database cannot be reached for the balance', async () => {
    const closed = openDatabase('sqlite::memory:');
    await migrate(closed);
    await closed.close();
    const offline = new CaptureSubmission({
      credits: new CreditRepository(closed),
      creditsPerCapture: PER_CAPTURE,
      checkDestination,
    }).withQueues({ jobs, batches: batchQueue });
    const key: AuthenticatedKey = { keyId: 'k', organizationId: 'gone', userId: null, membershipActive: true };
    const answer = await refusal(
      offline.submitJob({ key, body: options({ url: 'https://example.com/' }), baseUrl: 'http://api.test', kind: 'async' }),
    );
    expect(answer).toMatchObject({
      status: 503,
      retryAfter: 5,
      body: {
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'Service temporarily unavailable: the database cannot be reached; nothing was queued. Retry shortly.',
        },
      },
    });
    expect(queued).toEqual([]);
  });
});
