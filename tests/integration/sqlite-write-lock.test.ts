import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsRepository } from '../../server/src/store/accounts-repository.js';
import { CreditRepository } from '../../server/src/store/credit-repository.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { betterSqlite3 } from '../../server/src/store/sqlite-driver.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

interface RawConnection {
  exec(sql: string): void;
  prepare(sql: string): { run(...params: unknown[]): unknown };
  close(): void;
}

/** Longer than any wait SQLite's own busy handler would make before answering SQLITE_BUSY (better-sqlite3's default is 5 s). */
const HOLD_MS = 6_000;

/**
 * Another process's write transaction holding SQLite's write lock for seconds (a raw connection of
 * the test's own, as a `worker` would hold it): the service's writes wait for it without failing,
 * whatever their shape (a transaction that reads then writes, one that only writes, a single
 * statement), and the process keeps running meanwhile instead of blocking in SQLite's busy handler.
 */
describe('SQLite: writes while another connection holds the write lock', () => {
  let database: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    db = openDatabase(database.url);
    await migrate(db);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('they wait for the lock and then all succeed; the event loop is never held for long', async () => {
    const accounts = new AccountsRepository(db);
    const credits = new CreditRepository(db);
    const plan = await accounts.createPlan({ name: 'Lock test', tier: 'test', creditsPerMonth: 100 });
    const org = await accounts.createOrganization('Lock org', plan);
    const entry = {
      requestId: 'held-release',
      organizationId: org.id,
      apiKeyId: null,
      format: 'png',
      source: 'html' as const,
      targetHost: null,
      userAgent: null,
    };
    expect(await credits.reserve(entry, 1)).toEqual({ reserved: true });

    const Driver = betterSqlite3() as new (file: string) => RawConnection;
    const other = new Driver(database.url.slice('sqlite:'.length));
    let gap = 0;
    try {
      other.exec('BEGIN IMMEDIATE');
      other.prepare('UPDATE credit_balances SET remaining = remaining + 5 WHERE organization_id = ?').run(org.id);

      const settled: string[] = [];
      const track = <T>(name: string, work: Promise<T>) => work.finally(() => settled.push(name));
      const writes = Promise.all([
        // Reads the reservation, then moves it and the balance: a transaction that reads before it writes.
        track('release', credits.release(entry.requestId, null)),
        track('organization', accounts.createOrganization('Second org', plan)),
        track('grant', credits.grant(org.id, 10)),
      ]);
      // Awaited after the commit; a write that fails meanwhile is reported there, not as an unhandled rejection.
      writes.catch(() => undefined);
      // How long the event loop goes without running a timer while the writes wait.
      let last = Date.now();
      const ticker = setInterval(() => {
        gap = Math.max(gap, Date.now() - last);
        last = Date.now();
      }, 20);
      // The fault itself: the lock held this long by the other connection.
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      clearInterval(ticker);
      expect(settled).toEqual([]);
      other.exec('COMMIT');

      const [released, second] = await writes;
      expect(released).toBe(true);
      expect(second.name).toBe('Second org');
    } finally {
      other.close();
    }
    // 100 credits, one reserved and released, 5 from the other connection, 10 granted.
    expect(await credits.balance(org.id)).toMatchObject({ remaining: 115, reserved: 0 });
    expect(gap).toBeLessThan(1_000);
    console.log(`[sqlite-write-lock] writes waited ${HOLD_MS} ms for the lock; longest event-loop stall meanwhile ${gap} ms`);
  }, 60_000);
});
