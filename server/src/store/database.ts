import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import knex, { type Knex } from 'knex';
import { SqliteClient } from './sqlite-driver.js';

/** SQLite's own (blocking) wait for the write lock, each try; the driver's retries wait longer without blocking. */
const SQLITE_BUSY_TIMEOUT_MS = 100;

export type Dialect = 'sqlite' | 'mysql';

export interface Database {
  knex: Knex;
  dialect: Dialect;
  /** The database clock in epoch milliseconds, as an SQL expression (expiry checks use the database's time). */
  nowMs(): Knex.Raw;
  close(): Promise<void>;
}

/**
 * The database file and its WAL/SHM companions are the service's alone (docs/security.md): Chromium
 * runs as another user, who must not read them. Folders made here are 0700; the file is created
 * 0600 before SQLite opens it, so the WAL and SHM files SQLite makes take the same mode. Folders
 * that already existed are left alone (they may be shared ones such as /var/lib).
 */
function keepPrivate(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path)) chmodSync(path, 0o600);
  }
}

interface BetterSqliteConnection {
  pragma(source: string): unknown;
  prepare(source: string): unknown;
}

/** Distinct SQL texts kept prepared per connection; past it the cache starts again (queries with lists of varying length make new texts). */
const PREPARED_STATEMENTS_KEPT = 256;

/**
 * knex prepares every query again (better-sqlite3's prepare parses and plans the SQL), about a
 * tenth of a millisecond each, a dozen times a capture. A statement of better-sqlite3 can be run
 * again with other bindings, and SQLite prepares it anew by itself after a schema change; knex
 * sets nothing on it that would carry over (it would only set safeIntegers, which this service never asks for).
 */
function reusePreparedStatements(conn: BetterSqliteConnection): void {
  const prepare = conn.prepare.bind(conn);
  const prepared = new Map<string, unknown>();
  conn.prepare = (source: string) => {
    let statement = prepared.get(source);
    if (statement === undefined) {
      statement = prepare(source);
      if (prepared.size >= PREPARED_STATEMENTS_KEPT) prepared.clear();
      prepared.set(source, statement);
    }
    return statement;
  };
}

/** What knex says while another process holds the migration lock: migrate() below waits for it and names the way out itself. */
const MIGRATION_LOCK_WARNING = /Can't take lock to run migrations|release the lock manually/;

/**
 * knex's own messages go to stderr: it prints to stdout by default, where they would break the
 * CLI's --json output (several commands started at once wait for each other's migration lock).
 */
const knexLog: Knex.Logger = {
  warn: (message) => {
    if (!MIGRATION_LOCK_WARNING.test(String(message))) console.error(message);
  },
  error: (message) => console.error(message),
  // knex passes its finished sentence, whatever its type says.
  deprecate: (message: string) => console.error(message),
};

/** Opens `sqlite:<path>` (embedded default) or `mysql://…` (MySQL/MariaDB). */
export function openDatabase(url: string): Database {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:') keepPrivate(resolve(path));
    const instance = knex({
      client: SqliteClient,
      connection: { filename: path },
      useNullAsDefault: true,
      log: knexLog,
      pool: {
        min: 1,
        max: 1,
        // Several processes may share the file (`serve` and `worker`s). WAL lets readers run beside the
        // one writer. busy_timeout makes a statement wait for another process's write lock instead of
        // failing with SQLITE_BUSY; it waits briefly, as SQLite's wait blocks the event loop, and the
        // client retries asynchronously beyond it (sqlite-driver.ts). Set on every connection the pool
        // opens (after journal_mode, which better-sqlite3's own 5 s default covers on a fresh file).
        afterCreate: (conn: BetterSqliteConnection, done: (err: Error | null, conn: unknown) => void) => {
          conn.pragma('journal_mode = WAL');
          conn.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
          conn.pragma('foreign_keys = ON');
          reusePreparedStatements(conn);
          done(null, conn);
        },
      },
    });
    return {
      knex: instance,
      dialect: 'sqlite',
      nowMs: () => instance.raw("CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"),
      close: () => instance.destroy(),
    };
  }
  const instance = knex({
    client: 'mysql2',
    connection: { uri: url, supportBigNumbers: true, bigNumberStrings: false, timezone: 'Z' } as Knex.MySql2ConnectionConfig,
    pool: { min: 0, max: 10 },
    acquireConnectionTimeout: 5_000,
    log: knexLog,
  });
  return {
    knex: instance,
    dialect: 'mysql',
    nowMs: () => instance.raw('CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)'),
    close: () => instance.destroy(),
  };
}

export { migrate } from './migrate.js';

/** A nullable numeric column as a number: MySQL hands BIGINT and DECIMAL back as strings. */
export function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** Affected-row count of an update, the same on both drivers. */
export function affected(result: unknown): number {
  return typeof result === 'number'
    ? result
    : Array.isArray(result)
      ? Number((result[0] as { affectedRows?: number })?.affectedRows ?? 0)
      : 0;
}

/** The insert hit a unique key (MySQL/MariaDB ER_DUP_ENTRY, SQLite's unique or primary-key constraint). */
export function isDuplicateKey(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
