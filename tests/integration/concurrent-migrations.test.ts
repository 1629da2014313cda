import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../server/src/store/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

/**
 * A deployment starts its API and its workers at once on a fresh database (docs/deploy.md): they
 * race for knex's migration lock, and every one of them must start, not only the winner.
 */
describe('processes migrating one fresh MariaDB database at once', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('mysql');
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('all finish: the losers of the lock wait for the winner and find nothing left to run', async () => {
    const connections = [openDatabase(database.url), openDatabase(database.url), openDatabase(database.url)];
    try {
      const results = await Promise.allSettled(connections.map((db) => migrate(db)));
      expect(results.map((result) => (result.status === 'rejected' ? String(result.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok']);
      const [pending] = (await connections[0]!.knex.raw('SELECT COUNT(*) AS n FROM daguerre_migrations')) as [Array<{ n: number }>];
      expect(Number(pending[0]!.n)).toBeGreaterThan(5);
    } finally {
      await Promise.all(connections.map((db) => db.close()));
    }
  });

  it('a lock table left with a row per process (knex adds its row by check-then-insert) is repaired at the next start', async () => {
    const db = openDatabase(database.url);
    try {
      await migrate(db);
      await db.knex('daguerre_migrations_lock').insert({ is_locked: 0 });
      expect(await db.knex('daguerre_migrations_lock').count({ n: '*' }).first()).toEqual({ n: 2 });
      await migrate(db, 1_000);
      expect(await db.knex('daguerre_migrations_lock').select('index', 'is_locked')).toEqual([{ index: 1, is_locked: 0 }]);
    } finally {
      await db.close();
    }
  });

  it('a lock left by a killed process fails the start after the wait, naming how to release it', async () => {
    const db = openDatabase(database.url);
    try {
      await db.knex('daguerre_migrations_lock').update({ is_locked: 1 });
      await expect(migrate(db, 1_000)).rejects.toThrow(/UPDATE daguerre_migrations_lock SET is_locked = 0/);
    } finally {
      await db.knex('daguerre_migrations_lock').update({ is_locked: 0 });
      await db.close();
    }
  });
});
