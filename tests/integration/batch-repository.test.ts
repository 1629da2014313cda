import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsRepository } from '../../server/src/store/accounts-repository.js';
import { BatchRepository } from '../../server/src/store/batch-repository.js';
import { CreditRepository } from '../../server/src/store/credit-repository.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { JobRepository } from '../../server/src/store/job-repository.js';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.js';

/** The batch records (docs/bulk.md) on both dialects: the join over the jobs, the one-time close, retention. */
describe.each(DATABASE_KINDS)('batch records on %s', (kind) => {
  let database: TestDatabase;
  let db: Database;
  let batches: BatchRepository;
  let jobs: JobRepository;
  let organizationId: string;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    db = openDatabase(database.url);
    await migrate(db);
    const accounts = new AccountsRepository(db);
    const plan = await accounts.createPlan({ name: `batch-${randomUUID()}`, tier: 'test', creditsPerMonth: 10 });
    organizationId = (await accounts.createOrganization('Batch org', plan)).id;
    batches = new BatchRepository(db);
    jobs = new JobRepository(db, new CreditRepository(db));
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const newJob = async () => {
    const id = randomUUID();
    await jobs.create({ id, organizationId, apiKeyId: null, payload: '{}', hasSecrets: false, baseUrl: 'http://x' });
    return id;
  };

  it('completes once, only when every item is recorded and ended; reads item states through the jobs', async () => {
    const batchId = randomUUID();
    await batches.create({ id: batchId, organizationId, apiKeyId: null, itemCount: 3, webhookUrl: 'http://hook', baseUrl: 'http://x' });
    const ids = [await newJob(), await newJob()];
    for (const [index, id] of ids.entries()) await batches.addItem(batchId, index, id);
    await jobs.fail(ids[0]!, { code: 'TARGET_HTTP_ERROR', message: 'x' });
    await jobs.fail(ids[1]!, { code: 'CANCELLED', message: 'y' });
    // Two of three items recorded: not complete, whatever their states.
    expect(await batches.completeIfDone(batchId)).toBe(false);
    const third = await newJob();
    await batches.addItem(batchId, 2, third);
    expect(await batches.completeIfDone(batchId)).toBe(false);
    const items = await batches.items(batchId);
    expect(items.map((item) => [item.index, item.status, item.errorCode])).toEqual([
      [0, 'failed', 'TARGET_HTTP_ERROR'],
      [1, 'failed', 'CANCELLED'],
      [2, 'queued', null],
    ]);
    await jobs.fail(third, { code: 'OPERATION_FAILED', message: 'z' });
    const [first, second] = await Promise.all([batches.completeIfDone(batchId), batches.completeIfDone(batchId)]);
    expect([first, second].filter(Boolean)).toHaveLength(1);
    expect(await batches.cancel(batchId)).toBe(false);
    expect(await batches.get(batchId)).toMatchObject({ state: 'completed', webhookState: 'pending' });
    expect((await batches.webhooksPending()).map((b) => b.id)).toContain(batchId);
    await batches.markWebhookQueued(batchId);
    expect((await batches.webhooksPending()).map((b) => b.id)).not.toContain(batchId);
    expect(await batches.batchOfJob(third)).toBe(batchId);
    expect((await batches.latest(organizationId)).map((b) => b.id)).toContain(batchId);
  });

  it('an item whose job record is gone reads as null (expired); finished batches go after retention with their items', async () => {
    const batchId = randomUUID();
    await batches.create({ id: batchId, organizationId, apiKeyId: null, itemCount: 1, baseUrl: 'http://x' });
    const id = await newJob();
    await batches.addItem(batchId, 0, id);
    expect(await batches.cancel(batchId)).toBe(true);
    await jobs.remove(id);
    expect((await batches.items(batchId))[0]!.status).toBeNull();
    expect((await batches.get(batchId))!.webhookState).toBeNull();
    await batches.removeFinishedBefore(Date.now() + 1);
    expect(await batches.get(batchId)).toBeUndefined();
    expect(await batches.items(batchId)).toEqual([]);
  });
});
