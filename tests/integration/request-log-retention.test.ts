import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestLog } from '../../server/src/services/request-log.js';
import { AccountsRepository } from '../../server/src/store/accounts-repository.js';
import { CreditRepository } from '../../server/src/store/credit-repository.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { RequestLogRepository, type RefusedCapture } from '../../server/src/store/request-log-repository.js';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.js';

const DAY_MS = 86_400_000;

describe.each(DATABASE_KINDS)('the request log on %s: its refusal cap, its retention and its one row per capture', (kind) => {
  let database: TestDatabase;
  let db: Database;
  let organizationId: string;
  let clock = Date.UTC(2026, 10, 28, 12, 0, 30);
  const repository = () => new RequestLogRepository(db);
  const log = (refusalsPerMinute: number) =>
    new RequestLog(repository(), {
      retentionDays: 30,
      refusalsPerMinute,
      sweepIntervalMs: 60_000,
      logger: pino({ level: 'silent' }),
      now: () => clock,
    });
  const refusal = (requestId: string, at = clock): RefusedCapture => ({
    requestId,
    organizationId,
    apiKeyId: null,
    kind: 'sync',
    format: 'png',
    source: 'url',
    target: 'https://example.com/a?token=[REDACTED]',
    errorCode: 'RATE_LIMIT_EXCEEDED',
    httpStatus: 429,
    durationMs: 2,
    at,
  });
  const statuses = async () =>
    Object.fromEntries(
      ((await db.knex('capture_ledger').select('request_id', 'status')) as { request_id: string; status: string }[]).map((r) => [
        r.request_id,
        r.status,
      ]),
    );

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    db = openDatabase(database.url);
    await migrate(db);
    const accounts = new AccountsRepository(db);
    organizationId = (
      await accounts.createOrganization('Log org', await accounts.createPlan({ name: 'log plan', tier: 'test', creditsPerMonth: 100 }))
    ).id;
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('writes at most REQUEST_LOG_REFUSALS_PER_MINUTE refusals per key and minute, and again the next minute', async () => {
    const capped = log(2);
    for (const id of ['r1', 'r2', 'r3', 'r4']) await capped.refused(refusal(id));
    clock += 60_000;
    await capped.refused(refusal('r5'));
    const rows = await statuses();
    expect(['r1', 'r2', 'r3', 'r4', 'r5'].filter((id) => rows[id])).toEqual(['r1', 'r2', 'r5']);
  });

  it('leaves the row of a capture that reserved credits as it is: a refusal for the same request is ignored', async () => {
    const credits = new CreditRepository(db);
    await credits.reserve(
      { requestId: 'reserved-1', organizationId, apiKeyId: null, format: 'png', source: 'url', targetHost: 'example.com', userAgent: null },
      1,
    );
    await credits.release('reserved-1', 'CAPTURE_TIMEOUT', { processingMs: 1234, httpStatus: 504 });
    await log(100).refused({ ...refusal('reserved-1'), errorCode: 'CAPTURE_TIMEOUT', httpStatus: 504 });
    const row = await db.knex('capture_ledger').where('request_id', 'reserved-1').first();
    expect(row).toMatchObject({ status: 'released', error_code: 'CAPTURE_TIMEOUT', http_status: 504 });
    expect(Number(row.processing_ms)).toBe(1234);
    expect(await db.knex('capture_ledger').where('request_id', 'reserved-1').count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('sweeps rows older than the retention, never an open reservation, and keeps the rest', async () => {
    const sweeping = log(100);
    const old = clock - 31 * DAY_MS;
    for (const id of ['old-1', 'old-2']) await sweeping.refused(refusal(id, old));
    await sweeping.refused(refusal('recent', clock - DAY_MS));
    const credits = new CreditRepository(db);
    await credits.reserve(
      { requestId: 'old-open', organizationId, apiKeyId: null, format: 'png', source: 'url', targetHost: null, userAgent: null },
      1,
    );
    await db.knex('capture_ledger').where('request_id', 'old-open').update({ created_at: old });
    expect(await sweeping.sweep()).toBe(2);
    const rows = await statuses();
    expect(rows['old-1']).toBeUndefined();
    expect(rows['old-2']).toBeUndefined();
    expect(rows.recent).toBe('refused');
    expect(rows['old-open']).toBe('reserved');
    expect(await sweeping.sweep()).toBe(0);
  });
});
