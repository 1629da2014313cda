import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLAN_NAME, defaultPlan } from '../../server/src/cli/admin.js';
import { loadConfig } from '../../server/src/config.js';
import { openDataLayer } from '../../server/src/services/data-layer.js';
import { AccountsRepository } from '../../server/src/store/accounts-repository.js';
import { migrate, openDatabase } from '../../server/src/store/database.js';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.js';
import { until } from '../helpers/until.js';

const run = promisify(execFile);
const CLI = new URL('../../server/bin/daguerre.js', import.meta.url).pathname;

interface Created {
  name: string;
  planId: string;
  planName: string;
}

/** `daguerre org create --name <name> --json` as a process of its own; its JSON, or why it failed. */
const orgCreate = (databaseUrl: string, name: string) =>
  run('node', [CLI, 'org', 'create', '--name', name, '--json'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    timeout: 120_000,
  }).then(
    ({ stdout }) => JSON.parse(stdout) as Created,
    (error: { code?: number; stderr?: string }) => `exit ${error.code}: ${error.stderr}`,
  );

async function plansIn(databaseUrl: string) {
  const db = openDatabase(databaseUrl);
  try {
    return (await db.knex('plans').select('id', 'name')) as Array<{ id: string; name: string }>;
  } finally {
    await db.close();
  }
}

/**
 * `daguerre org create` without --plan puts the organization on the default plan, made by the first
 * command that needs it. Several commands at once (a provisioning script's loop run in parallel)
 * race to make it: every one succeeds and one default plan exists.
 */
describe.each(DATABASE_KINDS)('parallel `daguerre org create` on %s', (kind) => {
  const databases: TestDatabase[] = [];
  const fresh = async () => {
    const database = await createTestDatabase(kind);
    databases.push(database);
    return database;
  };
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  it('eight processes on a fresh database (no schema yet): all succeed, on one default plan', async () => {
    const { url } = await fresh();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => orgCreate(url, `Parallel ${i}`)));
    expect(results.filter((result) => typeof result === 'string')).toEqual([]);
    const created = results as Created[];
    expect(created.map((org) => org.name).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `Parallel ${i}`).sort());
    expect(new Set(created.map((org) => org.planName))).toEqual(new Set([DEFAULT_PLAN_NAME]));
    expect(await plansIn(url)).toEqual([{ id: created[0]!.planId, name: DEFAULT_PLAN_NAME }]);
    const db = openDatabase(url);
    try {
      const subscribed = (await db.knex('subscriptions').where('plan_id', created[0]!.planId).count({ n: '*' }).first()) as {
        n: number | string;
      };
      expect(Number(subscribed.n)).toBe(8);
    } finally {
      await db.close();
    }
  }, 240_000);

  it("two connections that both found no default plan: the second insert meets the first one's row and uses it", async () => {
    const { url } = await fresh();
    const config = loadConfig({}, { DATABASE_URL: url });
    const [first, second] = [await openDataLayer(config), await openDataLayer(config)];
    try {
      // Both look before either inserts (each query awaits its answer), so both insert: the race itself.
      const [a, b] = await Promise.all([defaultPlan(first, 100), defaultPlan(second, 100)]);
      expect(b.id).toBe(a.id);
      expect(await plansIn(url)).toEqual([{ id: a.id, name: DEFAULT_PLAN_NAME }]);
    } finally {
      await Promise.all([first.db.close(), second.db.close()]);
    }
  });
});

/**
 * The race made certain on MariaDB: the test's own transaction inserts the default plan and holds
 * it uncommitted while the processes look (they see no plan) and insert (each waits on the unique
 * key). Once every one of them waits, the test commits: each insert meets a duplicate key.
 */
describe('`daguerre org create` processes whose inserts of the default plan all lose on MariaDB', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });

  it('every one uses the plan that won', async () => {
    database = await createTestDatabase('mysql');
    const holder = openDatabase(database.url);
    const root = await mysql.createConnection(database.url);
    try {
      await migrate(holder);
      const trx = await holder.knex.transaction();
      const winner = await new AccountsRepository({ ...holder, knex: trx }).createPlan({
        name: DEFAULT_PLAN_NAME,
        tier: 'starter',
        creditsPerMonth: 1000,
      });
      const processes = Array.from({ length: 5 }, (_, i) => orgCreate(database!.url, `Loser ${i}`));
      const schema = new URL(database.url).pathname.slice(1);
      await until(
        async () => {
          const [rows] = await root.query(
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE 'insert into `plans`%'",
            [schema],
          );
          return Number((rows as Array<{ n: number }>)[0]!.n) === 5 ? true : undefined;
        },
        120_000,
        'all five inserts of the default plan to wait for the uncommitted one',
      );
      await trx.commit();
      const results = await Promise.all(processes);
      expect(results.filter((result) => typeof result === 'string')).toEqual([]);
      expect((results as Created[]).map((org) => org.planId)).toEqual(Array(5).fill(winner.id));
      expect(await plansIn(database.url)).toEqual([{ id: winner.id, name: DEFAULT_PLAN_NAME }]);
    } finally {
      await root.end();
      await holder.close();
    }
  }, 240_000);
});
