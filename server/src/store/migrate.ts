import type { Knex } from 'knex';
import { adoptFormerNames } from './former-migration-names.js';
import { migrationSource } from './migrations.js';

const MIGRATIONS_TABLE = 'daguerre_migrations';
const LOCK_TABLE = `${MIGRATIONS_TABLE}_lock`;
/** How long a start waits for another process's migrations (a deployment starts its API and workers at once). */
const MIGRATION_LOCK_WAIT_MS = 120_000;

/** Another process holds the lock, or created knex's own bookkeeping tables a moment before this one. */
function lostMigrationRace(error: unknown): boolean {
  const { name, message } = error as Error;
  return name === 'MigrationLocked' || (message.includes(MIGRATIONS_TABLE) && /already exists/i.test(message));
}

/**
 * knex's lock is one row of its lock table, taken by an update that must change exactly one row
 * (https://knexjs.org/guide/migrations.html#locking). knex adds that row by reading the table and
 * inserting when it is empty, so processes starting together on a fresh database can add one each;
 * with two rows the lock can never be taken, and every process waits until it gives up. Here the row
 * is added under a fixed key, which a second process's insert meets and skips, before knex looks;
 * rows left by that race in an existing database are removed while nobody holds the lock.
 */
async function oneLockRow(knex: Knex): Promise<void> {
  try {
    if (!(await knex.schema.hasTable(LOCK_TABLE))) {
      // knex's own shape for this table (lib/migrations/migrate/table-creator.js).
      await knex.schema.createTable(LOCK_TABLE, (t) => {
        t.increments('index').primary();
        t.integer('is_locked');
      });
    }
  } catch (error) {
    if (!/already exists/i.test((error as Error).message)) throw error;
  }
  const [first] = (await knex(LOCK_TABLE).min({ index: 'index' })) as Array<{ index: number | null }>;
  if (first?.index == null) {
    await knex(LOCK_TABLE).insert({ index: 1, is_locked: 0 }).onConflict('index').ignore();
  } else {
    await knex(LOCK_TABLE).where('index', '>', first.index).andWhere('is_locked', 0).delete();
  }
}

/**
 * Brings the schema up to date. Processes that start together on one database (docs/deploy.md) race
 * for knex's migration lock: the loser waits for the winner instead of failing, and then finds
 * nothing left to run. A lock left by a process killed mid-migration is named in the error. A
 * database migrated under former names (the table's or the migrations') gets today's names first.
 */
export async function migrate(db: { knex: Knex }, lockWaitMs = MIGRATION_LOCK_WAIT_MS): Promise<void> {
  const deadline = Date.now() + lockWaitMs;
  for (;;) {
    try {
      await adoptFormerNames(db.knex, MIGRATIONS_TABLE);
      await oneLockRow(db.knex);
      await db.knex.migrate.latest({ migrationSource, tableName: MIGRATIONS_TABLE });
      return;
    } catch (error) {
      if (!lostMigrationRace(error)) throw error;
      if (Date.now() > deadline) {
        throw new Error(
          `Another process has held the migration lock for ${Math.round(lockWaitMs / 1000)} s. If no other Daguerre process is migrating this database (one was killed mid-migration), release it: UPDATE ${LOCK_TABLE} SET is_locked = 0`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
