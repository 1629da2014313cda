import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const TINY = encodeURIComponent('<p style="margin:0">x</p>');
const tinyCapture = (service: TestService, apiKey = service.apiKey) =>
  service.get(`/capture?html=${TINY}&viewportWidth=120&viewportHeight=100&apiKey=${apiKey}`);

async function usageOf(service: TestService, apiKey = service.apiKey) {
  const response = await service.get(`/usage?apiKey=${apiKey}`);
  return {
    status: response.status,
    body: (await response.json()) as { credits: Record<string, unknown>; error?: { code: string; message: string } },
  };
}

describe.each(DATABASE_KINDS)('credits under concurrency (%s)', (database) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ database, credits: 1, env: { MAX_CONCURRENCY: '2', MAX_QUEUE: '20' } });
  });
  afterAll(async () => service?.stop());

  it('1 credit left, 10 parallel captures: exactly one 200 and nine 402, balance 0, one charge', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => tinyCapture(service)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 402, 402, 402, 402, 402, 402, 402, 402, 402]);
    const refused = await responses.find((r) => r.status === 402)!.json();
    expect(refused).toMatchObject({ success: false, error: { code: 'INSUFFICIENT_CREDITS' } });
    const usage = await service.client.usage();
    expect(usage.credits.remaining).toBe(0);
    expect(usage.credits.usedThisPeriod).toBe(1);
    const ledger = await service.runtime.credits.ledger(service.organizationId);
    expect(ledger.filter((row) => row.status === 'charged')).toHaveLength(1);
    expect(ledger.filter((row) => row.status === 'reserved')).toHaveLength(0);
  });

  it('reconciles a reservation left by a crash at start-up: no leaked credit, no double charge', async () => {
    await service.runtime.credits.grant(service.organizationId, 5);
    const requestId = '00000000-0000-4000-8000-000000000001';
    const reserved = await service.runtime.credits.reserve(
      {
        requestId,
        organizationId: service.organizationId,
        apiKeyId: null,
        format: 'png',
        source: 'html',
        targetHost: null,
        userAgent: null,
      },
      1,
    );
    expect(reserved.reserved).toBe(true);
    // Age the row as if its process had died long ago, then run the start-up reconciliation.
    await service.runtime.db
      .knex('capture_ledger')
      .where('request_id', requestId)
      .update({ created_at: Date.now() - 3_600_000 });
    expect(await service.runtime.credits.releaseStaleReservations({ marginMs: 15_000, olderThanMs: 60_000 })).toBe(1);
    expect(await service.runtime.credits.releaseStaleReservations({ marginMs: 15_000, olderThanMs: 60_000 })).toBe(0);
    expect(await service.runtime.credits.commit(requestId, { processingMs: 1, fileSize: 1 })).toBe(false);
    const balance = await service.runtime.credits.balance(service.organizationId);
    expect(balance).toMatchObject({ remaining: 5, reserved: 0, used: 1 });
  });

  it('sweeps a reservation by its own capture deadline: a long delay keeps its credits reserved, a passed deadline frees them', async () => {
    await service.runtime.credits.grant(service.organizationId, 2);
    const entry = {
      organizationId: service.organizationId,
      apiKeyId: null,
      format: 'png',
      source: 'html' as const,
      targetHost: null,
      userAgent: null,
    };
    const longAgo = Date.now() - 3_600_000;
    const stillRunning = '00000000-0000-4000-8000-0000000000a1';
    const crashed = '00000000-0000-4000-8000-0000000000a2';
    // Both started an hour ago; one asked for a deadline still ahead (a capture with a long wait), one's deadline ended.
    await service.runtime.credits.reserve({ ...entry, requestId: stillRunning, deadline: Date.now() + 60_000 }, 1);
    await service.runtime.credits.reserve({ ...entry, requestId: crashed, deadline: Date.now() - 20_000 }, 1);
    await service.runtime.db.knex('capture_ledger').whereIn('request_id', [stillRunning, crashed]).update({ created_at: longAgo });
    expect(await service.runtime.credits.releaseStaleReservations({ marginMs: 15_000, olderThanMs: 60_000 })).toBe(1);
    const rows = await service.runtime.db
      .knex('capture_ledger')
      .whereIn('request_id', [stillRunning, crashed])
      .select('request_id', 'status');
    expect(Object.fromEntries(rows.map((row) => [row.request_id, row.status]))).toEqual({
      [stillRunning]: 'reserved',
      [crashed]: 'released',
    });
    expect(await service.runtime.credits.commit(stillRunning, { processingMs: 1, fileSize: 1 })).toBe(true);
  });
});

describe.each(DATABASE_KINDS)('keys (%s)', (database) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ database });
  });
  afterAll(async () => service?.stop());

  it('a key expires at its expiry instant, judged by the database clock', async () => {
    const key = await service.runtime.apiKeys.create({
      organizationId: service.organizationId,
      name: 'short',
      expiresAt: new Date(Date.now() + 2_000),
    });
    expect((await usageOf(service, key.key)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_300));
    const after = await usageOf(service, key.key);
    expect(after.status).toBe(401);
    expect(after.body.error).toEqual({ code: 'API_KEY_EXPIRED', message: 'API key expired' });
  });

  it('a revoked key answers 401 INVALID_API_KEY', async () => {
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'to-revoke' });
    expect((await usageOf(service, key.key)).status).toBe(200);
    await service.runtime.apiKeys.revoke(key.id);
    const after = await usageOf(service, key.key);
    expect(after.status).toBe(401);
    expect(after.body.error?.code).toBe('INVALID_API_KEY');
  });

  it('the keys table never holds a key value', async () => {
    const created = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'secret-check' });
    const dump = JSON.stringify(await service.runtime.db.knex('api_keys').select('*'));
    expect(dump).not.toContain(created.key);
    expect(dump).not.toContain(created.key.slice(12));
    expect(dump).toContain(created.prefix);
  });

  it('records the last-used time of a key', async () => {
    const created = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'used' });
    await usageOf(service, created.key);
    await new Promise((r) => setTimeout(r, 200));
    const row = await service.runtime.db.knex('api_keys').where('id', created.id).first();
    expect(Number(row.last_used_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('/usage answers 400 without organization context and 403 for an inactive member', async () => {
    const orphan = await service.runtime.apiKeys.create({ organizationId: null, name: 'no-org' });
    const noOrg = await usageOf(service, orphan.key);
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.error?.code).toBe('NO_ORGANIZATION_CONTEXT');
    expect((await tinyCapture(service, orphan.key)).status).toBe(400);

    const user = await service.runtime.accounts.createUser(`u${Date.now()}@example.com`, 'U');
    await service.runtime.accounts.addMember(service.organizationId, user.id);
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, userId: user.id, name: 'member' });
    expect((await usageOf(service, key.key)).status).toBe(200);
    await service.runtime.accounts.setMembershipActive(service.organizationId, user.id, false);
    const inactive = await usageOf(service, key.key);
    expect(inactive.status).toBe(403);
    expect(inactive.body.error?.code).toBe('MEMBERSHIP_INACTIVE');
    const capture = await tinyCapture(service, key.key);
    expect(capture.status).toBe(403);
  });
});

describe('rate limit on one instance', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ database: 'sqlite' });
  });
  afterAll(async () => service?.stop());

  it('uses the plan limit, reports it in /usage and answers 429 with Retry-After beyond it', async () => {
    const plan = await service.runtime.accounts.createPlan({
      name: `tight-${Date.now()}`,
      tier: 'tight',
      creditsPerMonth: 100,
      rateLimitMax: 3,
      rateLimitWindowMs: 30_000,
    });
    const org = await service.runtime.accounts.createOrganization('Tight', plan);
    const key = await service.runtime.apiKeys.create({ organizationId: org.id, name: 'k' });
    const usage = await usageOf(service, key.key);
    expect((usage.body as unknown as { rateLimits: { capture: unknown } }).rateLimits.capture).toEqual({
      windowMs: 30_000,
      maxRequestsPerWindow: 3,
    });
    const responses = [];
    for (let i = 0; i < 4; i += 1) responses.push(await tinyCapture(service, key.key));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(responses.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    const limited = responses[3]!;
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(30);
    const reset = Number(limited.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 31);
    expect(await limited.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMIT_EXCEEDED' } });
    // Validation errors carry the headers too, and the 429 charged nothing.
    const invalid = await service.get(`/capture?html=x&format=bmp&apiKey=${key.key}`);
    expect(invalid.headers.get('x-ratelimit-limit')).toBe('3');
    const after = await usageOf(service, key.key);
    expect(after.body.credits.usedThisPeriod).toBe(3);
  });
});

describe('rate-limit store down', () => {
  let service: TestService;
  beforeAll(async () => {
    // Nothing listens on port 1: the configured Redis is unreachable.
    service = await startTestService({ database: 'sqlite', env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(async () => service?.stop());

  it('fails closed with 503 and charges nothing', async () => {
    const response = await tinyCapture(service);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(body.error.message).toContain('rate-limit store');
    expect(response.headers.get('retry-after')).toBeTruthy();
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(0);
  });
});

describe('two instances on one MariaDB database', () => {
  let database: TestDatabase;
  let first: TestService;
  let second: TestService;
  beforeAll(async () => {
    database = await createTestDatabase('mysql');
    first = await startTestService({ databaseUrl: database.url, credits: 1000, env: { MAX_CONCURRENCY: '2', MAX_QUEUE: '64' } });
    second = await startTestService({ databaseUrl: database.url, credits: 1000, env: { MAX_CONCURRENCY: '2', MAX_QUEUE: '64' } });
  });
  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    await database?.drop();
  });

  it('50 parallel captures of one organization across both: exactly 40 accepted, 10 × 429, headers consistent', async () => {
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => tinyCapture(i % 2 === 0 ? first : second, first.apiKey)));
    const accepted = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(accepted).toHaveLength(40);
    expect(limited).toHaveLength(10);
    const remaining = accepted.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 40 }, (_, i) => i));
    for (const r of responses) expect(r.headers.get('x-ratelimit-limit')).toBe('40');
    for (const r of limited) expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    const usage = await first.client.usage();
    expect(usage.credits.usedThisPeriod).toBe(40);
    expect(usage.credits.remaining).toBe(960);
  });

  it('1 credit, parallel captures on both instances: one charge only', async () => {
    const org = await first.runtime.accounts.createOrganization(
      'One credit',
      await first.runtime.accounts.createPlan({ name: `one-${Date.now()}`, tier: 't', creditsPerMonth: 1 }),
    );
    const key = await first.runtime.apiKeys.create({ organizationId: org.id, name: 'k' });
    const responses = await Promise.all(Array.from({ length: 8 }, (_, i) => tinyCapture(i % 2 === 0 ? first : second, key.key)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(7);
  });

  it.each([
    [false, 0],
    [true, 40],
  ])('an ended period rolls over exactly once when both instances race (rollover=%s)', async (rollover, carried) => {
    const plan = await first.runtime.accounts.createPlan({
      name: `roll-${rollover}-${Date.now()}`,
      tier: 'r',
      creditsPerMonth: 100,
      rollover,
    });
    const org = await first.runtime.accounts.createOrganization(`Roll ${rollover}`, plan);
    const key = await first.runtime.apiKeys.create({ organizationId: org.id, name: 'k' });
    // 60 used of 100: 40 left to carry over for rollover plans. The period ended a minute ago.
    const now = Date.now();
    const start = now - 31 * 86_400_000;
    const end = now - 60_000;
    await first.runtime.db
      .knex('credit_balances')
      .where('organization_id', org.id)
      .update({ period_start: start, period_end: end, remaining: 40, used: 60 });
    const reports = await Promise.all(Array.from({ length: 10 }, (_, i) => usageOf(i % 2 === 0 ? first : second, key.key)));
    for (const report of reports) expect(report.status).toBe(200);
    const balance = await first.runtime.credits.balance(org.id);
    expect(balance).toMatchObject({ period_start: end, allocation: 100, carried_over: carried, remaining: 100 + carried, used: 0 });
    const usage = await usageOf(first, key.key);
    expect(usage.body.credits).toMatchObject({
      totalMonthlyAllocation: 100,
      remaining: 100 + carried,
      usedThisPeriod: 0,
      includesCreditRollover: rollover,
    });
    expect(new Date(usage.body.credits.periodStart as string).getTime()).toBe(end);
  });
});
