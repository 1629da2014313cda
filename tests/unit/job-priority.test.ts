import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsRepository } from '../../server/src/store/accounts-repository.js';
import { CreditRepository } from '../../server/src/store/credit-repository.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { JobRepository } from '../../server/src/store/job-repository.js';

/** The fair queue's numbers (BullMQ priorities: lower runs first, equal ones in arrival order). */
describe('fair queue priorities (start-time fair queuing on BullMQ priorities)', () => {
  let db: Database;
  let jobs: JobRepository;
  const orgs: string[] = [];
  let counter = 0;

  beforeAll(async () => {
    db = openDatabase('sqlite::memory:');
    await migrate(db);
    const accounts = new AccountsRepository(db);
    const plan = await accounts.createPlan({ name: 'p', tier: 'test', creditsPerMonth: 10 });
    for (const name of ['a', 'b', 'c']) orgs.push((await accounts.createOrganization(name, plan)).id);
    jobs = new JobRepository(db, new CreditRepository(db));
  });
  afterAll(async () => db?.close());

  /** Ids sort in arrival order, as BullMQ breaks ties. */
  const add = (org: number, weight?: number) =>
    jobs.create({
      id: `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`,
      organizationId: orgs[org]!,
      apiKeyId: null,
      payload: '{}',
      hasSecrets: false,
      baseUrl: 'http://x',
      ...(weight ? { weight } : {}),
    });
  /** The order a worker takes the queued jobs in, by organization. */
  const order = async () =>
    (
      (await db
        .knex('capture_jobs')
        .where('status', 'queued')
        .orderBy([{ column: 'priority' }, { column: 'id' }])
        .select('organization_id')) as Array<{ organization_id: string }>
    )
      .map((row) => 'abc'[orgs.indexOf(row.organization_id)])
      .join('');

  it("puts a newcomer's job next, ahead of a backlog, and interleaves two backlogs; each organization keeps its own order", async () => {
    for (let i = 0; i < 6; i++) await add(0);
    await add(1);
    expect(await order()).toBe('baaaaaa');
    for (let i = 0; i < 3; i++) await add(1);
    await add(2);
    // c (nothing queued) goes first; a and b take turns until b's backlog is spent.
    expect(await order()).toBe('cbabababaaa');
    // Jobs taken by workers leave the queued set: a newcomer still goes just ahead of what is left.
    const taken = (
      (await db
        .knex('capture_jobs')
        .where('status', 'queued')
        .orderBy([{ column: 'priority' }, { column: 'id' }])
        .limit(4)
        .select('id')) as Array<{ id: string }>
    ).map((row) => row.id);
    await db.knex('capture_jobs').whereIn('id', taken).update({ status: 'active' });
    await add(2);
    expect(await order()).toBe('cababaaa');
    // Within an organization: arrival order.
    const aIds = (
      (await db.knex('capture_jobs').where({ status: 'queued', organization_id: orgs[0] }).orderBy('priority').select('id')) as Array<{
        id: string;
      }>
    ).map((row) => row.id);
    expect(aIds).toEqual([...aIds].sort());
  });

  it('weights by plan: an organization whose plan has weight 2 gets two turns per round', async () => {
    await db.knex('capture_jobs').delete();
    for (let i = 0; i < 4; i++) await add(0);
    for (let i = 0; i < 4; i++) await add(1, 2);
    // a's numbers 1000..1003; b (weight 2) starts at 999 and puts two jobs on each number.
    expect(await order()).toBe('bbabbaaa');
  });
});
