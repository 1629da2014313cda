import type { Knex } from 'knex';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { migrationSource } from '../../server/src/store/migrations.js';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.js';

/**
 * The names migrations ran under until they were named for what they do, in their order, written
 * out here as the released versions recorded them (not read from the rename table, which this test
 * checks). The Rendershot versions had the first twelve, in a table of the old name.
 */
const FORMER_NAMES = [
  '0001_initial',
  '0002_storage_configs',
  '0003_dashboard_sessions',
  '0004_issue17_signing_secrets',
  '0004_issue18_ledger_mode',
  '0005_issue13_reservation_deadline',
  '0006_issue15_plan_share',
  '0007_issue15_sign_in_failures',
  '0008_issue27_plan_concurrency',
  '0009_issue28_sign_in_attempts',
  '0010_issue27_capture_jobs',
  '0011_issue34_capture_batches',
  '0012_request_log',
  '0013_webhook_deliveries',
  '0014_monitors',
];
const RENDERSHOT_COUNT = 12;

interface MigrationRow {
  id: number;
  name: string;
  batch: number;
}

async function currentNames(): Promise<string[]> {
  return migrationSource.getMigrations([]);
}

/** The first `count` migrations under their former names, each doing what today's migration at its place does. */
async function formerSource(count: number): Promise<Knex.MigrationSource<string>> {
  const current = await currentNames();
  expect(current).toHaveLength(FORMER_NAMES.length);
  const names = FORMER_NAMES.slice(0, count);
  return {
    getMigrations: async () => names,
    getMigrationName: (name) => name,
    getMigration: async (name) => migrationSource.getMigration(current[FORMER_NAMES.indexOf(name)]!),
  };
}

async function rows(db: Database, table = 'daguerre_migrations'): Promise<MigrationRow[]> {
  const found = (await db.knex(table).select('id', 'name', 'batch').orderBy('id')) as MigrationRow[];
  return found.map((row) => ({ id: Number(row.id), name: row.name, batch: Number(row.batch) }));
}

/** Data written under the former version, read back after the current one migrated. */
async function writeOrganization(db: Database): Promise<void> {
  await db.knex('organizations').insert({ id: 'org-former', name: 'Kept', created_at: 1 });
}

describe.each(DATABASE_KINDS)('a %s database migrated under the former migration names', (kind) => {
  let database: TestDatabase | undefined;
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    await database?.drop();
    db = undefined;
    database = undefined;
  });

  it('is opened by the current version: every name renamed, nothing run twice, its data kept', async () => {
    database = await createTestDatabase(kind);
    db = openDatabase(database.url);
    await db.knex.migrate.latest({ migrationSource: await formerSource(FORMER_NAMES.length), tableName: 'daguerre_migrations' });
    await writeOrganization(db);
    const before = await rows(db);
    expect(before.map((row) => row.name)).toEqual(FORMER_NAMES);

    await migrate(db);
    const after = await rows(db);
    expect(after.map((row) => row.name)).toEqual(await currentNames());
    expect(after.map(({ id, batch }) => ({ id, batch }))).toEqual(before.map(({ id, batch }) => ({ id, batch })));
    expect(await db.knex('organizations').where({ id: 'org-former' }).first()).toMatchObject({ name: 'Kept' });

    await migrate(db);
    expect(await rows(db)).toEqual(after);
  });

  it('of the Rendershot days, part of the way: the table takes its new name and only the later migrations run', async () => {
    database = await createTestDatabase(kind);
    db = openDatabase(database.url);
    await db.knex.migrate.latest({ migrationSource: await formerSource(RENDERSHOT_COUNT), tableName: 'rendershot_migrations' });
    await writeOrganization(db);
    const before = await rows(db, 'rendershot_migrations');

    await migrate(db);
    expect(await db.knex.schema.hasTable('rendershot_migrations')).toBe(false);
    const after = await rows(db);
    const current = await currentNames();
    expect(after.map((row) => row.name)).toEqual(current);
    expect(after.slice(0, RENDERSHOT_COUNT).map(({ id, batch }) => ({ id, batch }))).toEqual(
      before.map(({ id, batch }) => ({ id, batch })),
    );
    expect(new Set(after.slice(RENDERSHOT_COUNT).map((row) => row.batch))).toEqual(new Set([before.at(-1)!.batch + 1]));
    expect(await db.knex('organizations').where({ id: 'org-former' }).first()).toMatchObject({ name: 'Kept' });
    expect(await db.knex.schema.hasTable('monitors')).toBe(true);
  });
});
